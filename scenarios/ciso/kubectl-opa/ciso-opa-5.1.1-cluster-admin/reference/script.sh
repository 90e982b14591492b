#!/usr/bin/env bash
# Evidence for CIS 5.1.1: every ClusterRoleBinding, its role and its subjects.
set -euo pipefail
kubectl get clusterrolebindings --output json \
  | jq '{bindings: [.items[] | {name: .metadata.name, role: .roleRef, subjects: (.subjects // [])}]}' \
  > collected_data.json
