/* tests/data/vendor-session.sbg: a unit data-logger session written by the vendor's
   sbgECom library (see tests/data/README.md): a drive near the
   base station of the vendor's cloud samples, 2020-06-15 from 15:20:00 UTC.
   usage: vendor-session OUT SECONDS RATE_HZ */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sbgECom.h>
#include <interfaces/sbgInterfaceFile.h>
#include <logs/sbgEComLogEkf.h>
#include <logs/sbgEComLogUtc.h>
#include <logs/sbgEComLogGnssPos.h>

static SbgEComProtocol proto;

static void send(uint8_t id, SbgErrorCode (*write)(const void *, SbgStreamBuffer *), const void *log)
{
    uint8_t buf[256];
    SbgStreamBuffer s;
    sbgStreamBufferInitForWrite(&s, buf, sizeof buf);
    if (write(log, &s) != SBG_NO_ERROR) { fprintf(stderr, "write %u\n", id); exit(1); }
    if (sbgEComProtocolSend(&proto, SBG_ECOM_CLASS_LOG_ECOM_0, id, buf, sbgStreamBufferGetLength(&s)) != SBG_NO_ERROR) {
        fprintf(stderr, "send %u\n", id); exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: vendor-session OUT SECONDS RATE_HZ\n"); return 2; }
    double seconds = atof(argv[2]);
    int rate = atoi(argv[3]);
    SbgInterface iface;
    if (sbgInterfaceFileWriteOpen(&iface, argv[1]) != SBG_NO_ERROR) return 1;
    sbgEComProtocolInit(&proto, &iface);

    const double lat0 = 48.9331, lon0 = 2.1680, alt0 = 52.0, und = 44.7;
    const double R = 6378137.0, g = 9.81, speed = 12.0;
    const uint32_t t0 = 600000000u;          /* µs since power-up at the first record */
    const uint32_t tow0 = (86400u + 15u * 3600u + 20u * 60u + 18u) * 1000u;
    double n = 0, e = 0, heading = 0.3;
    int steps = (int)(seconds * rate);
    double dt = 1.0 / rate;
    for (int i = 0; i <= steps; i++) {
        double t = i * dt;
        uint32_t ts = t0 + (uint32_t)llround(t * 1e6);
        double yawRate = 0.12 * sin(2 * M_PI * t / 40.0);
        if (i > 0) { heading += yawRate * dt; n += speed * cos(heading) * dt; e += speed * sin(heading) * dt; }
        double lat = lat0 + n / R * 180 / M_PI, lon = lon0 + e / (R * cos(lat0 * M_PI / 180)) * 180 / M_PI;
        double alt = alt0 + 0.8 * sin(2 * M_PI * t / 60.0);
        double climb = 0.8 * 2 * M_PI / 60.0 * cos(2 * M_PI * t / 60.0);
        int ms = (int)llround(t * 1000);
        if (ms % 1000 == 0) {
            SbgEComLogUtc u; sbgEComLogUtcZeroInit(&u);
            u.timeStamp = ts; u.year = 2020; u.month = 6; u.day = 15; u.hour = 15;
            int s = ms / 1000; u.minute = 20 + s / 60; u.second = s % 60; u.nanoSecond = 0;
            u.gpsTimeOfWeek = tow0 + ms;
            sbgEComLogUtcSetClockState(&u, SBG_ECOM_CLOCK_STATE_VALID);
            sbgEComLogUtcSetUtcStatus(&u, SBG_ECOM_UTC_STATUS_INITIALIZED);
            sbgEComLogUtcTimeSetIsAccurate(&u, true);
            u.clkBiasStd = NAN; u.clkSfErrorStd = NAN; u.clkResidualError = NAN;
            send(SBG_ECOM_LOG_UTC_TIME, (void *)sbgEComLogUtcWriteToStream, &u);
        }
        if (ms % 200 == 0) {
            SbgEComLogGnssPos p; sbgEComLogGnssPosZeroInit(&p);
            p.timeStamp = ts; p.timeOfWeek = tow0 + ms;
            sbgEComLogGnssPosSetStatus(&p, SBG_ECOM_GNSS_POS_STATUS_SOL_COMPUTED);
            sbgEComLogGnssPosSetType(&p, SBG_ECOM_GNSS_POS_TYPE_RTK_INT);
            p.latitude = lat; p.longitude = lon; p.altitude = alt; p.undulation = (float)und;
            p.latitudeAccuracy = 0.012f; p.longitudeAccuracy = 0.011f; p.altitudeAccuracy = 0.02f;
            p.numSvUsed = 21; p.numSvTracked = 27; p.baseStationId = 0; p.differentialAge = 80;
            send(SBG_ECOM_LOG_GPS1_POS, (void *)sbgEComLogGnssPosWriteToStream, &p);
        }
        uint32_t status = sbgEComLogEkfBuildSolutionStatus(SBG_ECOM_SOL_MODE_NAV_POSITION,
            SBG_ECOM_SOL_ATTITUDE_VALID | SBG_ECOM_SOL_HEADING_VALID | SBG_ECOM_SOL_VELOCITY_VALID |
            SBG_ECOM_SOL_POSITION_VALID | SBG_ECOM_SOL_GPS1_POS_USED | SBG_ECOM_SOL_ALIGN_VALID);
        SbgEComLogEkfEuler eu; memset(&eu, 0, sizeof eu);
        eu.timeStamp = ts;
        eu.euler[0] = (float)atan(speed * yawRate / g);
        eu.euler[1] = (float)atan2(climb, speed);
        eu.euler[2] = (float)remainder(heading, 2 * M_PI);
        eu.eulerStdDev[0] = 0.0003f; eu.eulerStdDev[1] = 0.0003f; eu.eulerStdDev[2] = 0.0012f;
        eu.status = status; eu.magDeclination = NAN; eu.magInclination = NAN;
        send(SBG_ECOM_LOG_EKF_EULER, (void *)sbgEComLogEkfEulerWriteToStream, &eu);
        SbgEComLogEkfNav nav; memset(&nav, 0, sizeof nav);
        nav.timeStamp = ts;
        nav.velocity[0] = (float)(speed * cos(heading)); nav.velocity[1] = (float)(speed * sin(heading));
        nav.velocity[2] = (float)-climb;
        nav.velocityStdDev[0] = nav.velocityStdDev[1] = 0.01f; nav.velocityStdDev[2] = 0.015f;
        nav.position[0] = lat; nav.position[1] = lon; nav.position[2] = alt;
        nav.undulation = (float)und;
        nav.positionStdDev[0] = 0.015f; nav.positionStdDev[1] = 0.014f; nav.positionStdDev[2] = 0.025f;
        nav.status = status;
        send(SBG_ECOM_LOG_EKF_NAV, (void *)sbgEComLogEkfNavWriteToStream, &nav);
    }
    sbgEComProtocolClose(&proto);
    sbgInterfaceDestroy(&iface);
    return 0;
}
