"""The sample survey shipped with the package, so that examples run from any folder:
``rover.nmea`` (a short GNSS track, NMEA GGA and RMC sentences), ``processing.json`` (a
processing configuration in the project's shorthand) and ``project.json`` (the vendor's
project form: SBET, ASCII and KML exports, JSON and HTML reports)::

    from svc_sdk import Emulator, Workflow, samples

    with Emulator() as emulator:
        outcome = Workflow(emulator.cloud()).run(
            samples.path("rover.nmea"), samples.path("processing.json"), out="results"
        )

They are the repository's ``samples/`` files (a test checks that the copies agree).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["NAMES", "path"]

#: The files of the sample survey.
NAMES = ("rover.nmea", "processing.json", "project.json")


def path(name: str) -> Path:
    """The path of a sample file (one of :data:`NAMES`), ready to be opened or given
    to a workflow. ``KeyError`` for another name."""
    if name not in NAMES:
        raise KeyError(f"no sample {name!r}; the samples are {', '.join(NAMES)}")
    found = resources.files(__name__).joinpath(name)
    # An installed package is a folder of files (wheels are unpacked): a real path.
    return Path(str(found))
