"""Line and branch coverage of one file, for a run asked to measure its tree.

Copied into runs; it imports nothing of the harness. Used by the recorder (a tree that runs
beside its tests) and by the tree server (a tree behind a proxy).
"""

from __future__ import annotations

import json
import os
import tempfile


class Measure:
    """Line and branch coverage of one file, every exclusion pragma off, from now on."""

    def __init__(self, path: str) -> None:
        import coverage

        self.path = os.path.abspath(path)
        handle, self.report = tempfile.mkstemp(suffix=".coverage.json")  # in the scratch
        os.close(handle)
        self.cov = coverage.Coverage(data_file=None, branch=True, include=[self.path],
                                     config_file=False)
        self.cov.clear_exclude("exclude")
        self.cov.clear_exclude("partial")
        self.cov.start()

    def stop(self) -> dict:
        self.cov.stop()
        try:
            self.cov.json_report(outfile=self.report)
            with open(self.report, encoding="utf-8") as source:
                found = json.load(source)["files"]
        except Exception as error:  # coverage's NoDataReported and the like: nothing ran
            return {"error": f"{type(error).__name__}: {error}"}
        if len(found) != 1:
            return {"error": "the tree's file was never imported"}
        (measured,) = found.values()
        return {key: measured[key] for key in ("executed_lines", "missing_lines",
                                               "executed_branches", "missing_branches")}
