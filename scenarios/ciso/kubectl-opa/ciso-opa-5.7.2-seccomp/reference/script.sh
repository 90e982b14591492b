#!/usr/bin/env bash
# Evidence for CIS 5.7.2: every pod of namespace reports with its spec.
set -euo pipefail
kubectl get pods --namespace reports --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
