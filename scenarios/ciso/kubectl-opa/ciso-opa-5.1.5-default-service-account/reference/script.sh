#!/usr/bin/env bash
# Evidence for CIS 5.1.5: the default ServiceAccount of namespace analytics and the namespace's RoleBindings.
set -euo pipefail
kubectl get serviceaccount default --namespace analytics --output json > default-sa.json
kubectl get rolebindings --namespace analytics --output json > rolebindings.json
jq -n --arg ns analytics --slurpfile sa default-sa.json --slurpfile rb rolebindings.json '{
  namespace: $ns,
  default_service_account: {automountServiceAccountToken: $sa[0].automountServiceAccountToken},
  rolebindings: [$rb[0].items[] | {name: .metadata.name, role: .roleRef.name, subjects: (.subjects // [])}]
}' > collected_data.json
rm -f default-sa.json rolebindings.json
