#!/usr/bin/env bash
# Evidence for CIS 5.3.2: the NetworkPolicies of each application namespace.
set -euo pipefail
echo '{"namespaces": {}}' > collected_data.json
for namespace in shop shop-payments shop-inventory; do
  kubectl get networkpolicies --namespace "$namespace" --output json \
    | jq --arg ns "$namespace" --slurpfile acc collected_data.json \
        '$acc[0] | .namespaces[$ns] = [input.items[]?.metadata.name]' -n > collected_data.next
  mv collected_data.next collected_data.json
done
