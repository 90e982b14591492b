package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.1.1: Ensure permissions on /etc/ssh/sshd_config are configured. input: {host: mode of /etc/ssh/sshd_config (as a decimal number)}.

default result := false

ok(v) if {
    is_string(v)
    regex.match(`^[0-9]+$`, v)
    bits.and(to_number(v), 3711) == 0
}

violations contains host if {
    some host, v in input
    not ok(v)
}

result if {
    is_object(input)
    count(input) > 0
    count(violations) == 0
}
