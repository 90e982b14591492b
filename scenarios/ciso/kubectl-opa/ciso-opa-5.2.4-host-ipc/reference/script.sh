#!/usr/bin/env bash
# Evidence for CIS 5.2.4: every pod of namespace media with its spec.
set -euo pipefail
kubectl get pods --namespace media --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
