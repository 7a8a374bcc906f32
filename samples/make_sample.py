"""Writes the sample dataset of this folder: `python3 samples/make_sample.py`.

A two-minute survey drive near Paris, deterministic (no randomness, no clock):

- `rover.nmea`: GNSS positions at 1 Hz as NMEA 0183 GGA + RMC sentences (talker GN),
  with correct checksums, RTK fix quality, an S-shaped path at about 10 m/s;
- `imu.csv`: IMU samples at 50 Hz (time, accelerations m/s², angular rates rad/s)
  consistent with the path's turns;
- `processing.json` (a processing configuration in the project's shorthand) and
  `project.json` (the same drive in the vendor's project form, with SBET, ASCII and
  KML exports and JSON and HTML reports) are written by hand beside them.

Running it again rewrites byte-identical files; `cargo xtask ci` checks that the
committed files are what this script produces (`--out DIR` writes elsewhere).
"""

import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
START = (2026, 3, 14, 9, 30, 0)  # UTC
LAT0, LON0, H0 = 48.856600, 2.352200, 35.0
SECONDS = 120
SPEED = 10.0  # m/s
EARTH = 6378137.0


def checksum(body):
    c = 0
    for ch in body.encode("ascii"):
        c ^= ch
    return f"{c:02X}"


def sentence(body):
    return f"${body}*{checksum(body)}\r\n"


def nmea_angle(value, lat):
    hemi = ("N" if value >= 0 else "S") if lat else ("E" if value >= 0 else "W")
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    width = 2 if lat else 3
    return f"{degrees:0{width}d}{minutes:08.5f}", hemi


def heading(t):
    # A gentle S: the heading swings ±40° around north-east over two minutes.
    return math.radians(45 + 40 * math.sin(2 * math.pi * t / 120))


def track():
    lat, lon, h = LAT0, LON0, H0
    for t in range(SECONDS + 1):
        yield t, lat, lon, h
        psi = heading(t)
        north, east = SPEED * math.cos(psi), SPEED * math.sin(psi)
        lat += math.degrees(north / EARTH)
        lon += math.degrees(east / (EARTH * math.cos(math.radians(lat))))
        h = H0 + 2.0 * math.sin(2 * math.pi * t / 90)


def clock(t):
    y, mo, d, hh, mm, ss = START
    total = hh * 3600 + mm * 60 + ss + t
    return f"{total // 3600:02d}{total % 3600 // 60:02d}{total % 60:02d}.00", f"{d:02d}{mo:02d}{y % 100:02d}"


def write_nmea(path):
    with open(path, "w", encoding="ascii", newline="") as f:
        for t, lat, lon, h in track():
            time, date = clock(t)
            la, ns = nmea_angle(lat, True)
            lo, ew = nmea_angle(lon, False)
            course = (math.degrees(heading(t)) + 360) % 360
            knots = SPEED * 3600 / 1852
            f.write(sentence(f"GNGGA,{time},{la},{ns},{lo},{ew},4,18,0.7,{h - 46.0:.3f},M,46.000,M,1.0,0000"))
            f.write(sentence(f"GNRMC,{time},A,{la},{ns},{lo},{ew},{knots:.3f},{course:.2f},{date},1.2,W,D"))


def write_imu(path):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write("time_s,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z\n")
        for i in range(SECONDS * 50 + 1):
            t = i / 50
            # Yaw rate of the S path; lateral acceleration v·ψ̇; gravity on z.
            yaw_rate = math.radians(40) * 2 * math.pi / 120 * math.cos(2 * math.pi * t / 120)
            f.write(f"{t:.2f},{0.0:.5f},{SPEED * yaw_rate:.5f},{-9.80665:.5f},0.00000,0.00000,{yaw_rate:.6f}\n")


if __name__ == "__main__":
    import sys

    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else HERE
    write_nmea(os.path.join(out, "rover.nmea"))
    write_imu(os.path.join(out, "imu.csv"))
