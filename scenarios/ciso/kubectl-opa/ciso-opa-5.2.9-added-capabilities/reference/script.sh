#!/usr/bin/env bash
# Evidence for CIS 5.2.9: every pod of namespace payments with its spec.
set -euo pipefail
kubectl get pods --namespace payments --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
