package check

import rego.v1

# CIS 5.2.2: Minimize the admission of privileged containers: no container may run with securityContext.privileged set to true.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	c.securityContext.privileged == true
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
