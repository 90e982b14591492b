package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.1.16: Ensure sshd MaxAuthTries is configured. input: {host: MaxAuthTries as /etc/ssh/sshd_config sets it}.

default result := false

ok(v) if {
    is_string(v)
    regex.match(`^[0-9]+$`, v)
    to_number(v) <= 4
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
