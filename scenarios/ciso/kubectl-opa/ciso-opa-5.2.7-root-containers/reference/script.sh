#!/usr/bin/env bash
# Evidence for CIS 5.2.7: every pod of namespace catalog with its spec.
set -euo pipefail
kubectl get pods --namespace catalog --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
