"""A task's comm and CPU, for the stall benchmarks' samplers."""


def comm_and_cpu(pid):
    """A task's comm and the CPU it last ran on, from its stat read as
    bytes; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    comm = raw[raw.index(b"(") + 1:raw.rindex(b")")].decode("ascii", "replace")
    # Field 39 (processor) is the 37th after the comm.
    return comm, int(raw[raw.rindex(b")") + 2:].split()[36])
