package check

import rego.v1

# CIS 5.2.5: Minimize the admission of containers wishing to share the host network namespace: no Pod may set hostNetwork to true.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	pod.spec.hostNetwork == true
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
