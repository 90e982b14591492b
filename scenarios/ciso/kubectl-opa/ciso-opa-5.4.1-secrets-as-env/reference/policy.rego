package check

import rego.v1

# CIS 5.4.1: Prefer using Secrets as files over Secrets as environment variables: no container may take a Secret into its environment, neither through env[].valueFrom.secretKeyRef nor through envFrom[].secretRef.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	some e in object.get(c, "env", [])
	e.valueFrom.secretKeyRef
}

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	some e in object.get(c, "envFrom", [])
	e.secretRef
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
