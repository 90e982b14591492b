package check

import rego.v1

# CIS 5.2.3: Minimize the admission of containers wishing to share the host process ID namespace: no Pod may set hostPID to true.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	pod.spec.hostPID == true
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
