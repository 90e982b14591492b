#!/usr/bin/env bash
# Evidence for CIS 5.1.2: the Roles of namespace inventory and their rules.
set -euo pipefail
kubectl get roles --namespace inventory --output json \
  | jq '{roles: [.items[] | {name: .metadata.name, rules: (.rules // [])}]}' \
  > collected_data.json
