package check

import rego.v1

# CIS 5.2.13: Minimize the admission of containers which use HostPorts: no container port may set hostPort.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	some port in object.get(c, "ports", [])
	object.get(port, "hostPort", 0) > 0
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
