package check

import rego.v1

# CIS 5.7.2: Ensure that the seccomp profile is set to RuntimeDefault (or a Localhost profile) in your pod definitions: every container must run under seccompProfile type RuntimeDefault or Localhost, set on the container or inherited from the Pod's securityContext; Unconfined or unset does not comply.

default result := false

containers(spec) := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

confined(profile) if profile.type in {"RuntimeDefault", "Localhost"}

container_confined(pod, c) if confined(c.securityContext.seccompProfile)

container_confined(pod, c) if {
	not c.securityContext.seccompProfile
	confined(pod.spec.securityContext.seccompProfile)
}

violations contains pod.name if {
	some pod in input.pods
	some c in containers(pod.spec)
	not container_confined(pod, c)
}

result if {
	is_array(input.pods)
	count(violations) == 0
}
