#!/usr/bin/env bash
# Evidence for CIS 5.2.5: every pod of namespace edge with its spec.
set -euo pipefail
kubectl get pods --namespace edge --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
