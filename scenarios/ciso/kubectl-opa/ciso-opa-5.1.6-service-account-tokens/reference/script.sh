#!/usr/bin/env bash
# Evidence for CIS 5.1.6: the pods of namespace frontend and its ServiceAccounts' token settings.
set -euo pipefail
kubectl get pods,serviceaccounts --namespace frontend --output json \
  | jq '{
      pods: [.items[] | select(.kind == "Pod") | {name: .metadata.name,
             serviceAccountName: (.spec.serviceAccountName // "default"),
             automountServiceAccountToken: .spec.automountServiceAccountToken}],
      serviceaccounts: [.items[] | select(.kind == "ServiceAccount") | {name: .metadata.name,
             automountServiceAccountToken: .automountServiceAccountToken}]
    }' > collected_data.json
