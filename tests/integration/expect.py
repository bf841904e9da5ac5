"""Checks that record a failure and go on, as CHECK does in the C tests
(tests/lib/check.h): one run shows every broken expectation."""


class Expect:
    def __init__(self):
        self.failed = []

    def __call__(self, what, cond, detail=""):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            self.failed.append(f"{what}: {detail}")
        return cond

    def exit_code(self):
        """Prints the summary; what main returns."""
        print(f"{0 if self.failed else 1} passed, {len(self.failed)} failed")
        for f in self.failed:
            print("  " + f)
        return 1 if self.failed else 0
