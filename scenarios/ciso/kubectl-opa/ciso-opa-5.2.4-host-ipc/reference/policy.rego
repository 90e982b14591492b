package check

import rego.v1

# CIS 5.2.4: Minimize the admission of containers wishing to share the host IPC namespace: no Pod may set hostIPC to true.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	pod.spec.hostIPC == true
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
