"""The harnesses' report: one line per check, `ok NAME: FACTS` or `FAIL NAME: FACTS` (CI counts
the lines that start with `ok ` and fails on any `FAIL`), and the totals.
"""


class Report:
    def __init__(self):
        self.checks = 0
        self.failed = 0

    def check(self, name, ok, facts):
        """Prints the check's line and returns whether it passed."""
        self.checks += 1
        if not ok:
            self.failed += 1
        print(f"{'ok' if ok else 'FAIL'} {name}: {facts}", flush=True)
        return ok
