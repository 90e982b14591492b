#!/usr/bin/env bash
# Evidence for CIS 5.2.6: every pod of namespace checkout with its spec.
set -euo pipefail
kubectl get pods --namespace checkout --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
