#!/usr/bin/env bash
# Evidence for CIS 5.2.12: every pod of namespace logging with its spec.
set -euo pipefail
kubectl get pods --namespace logging --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
