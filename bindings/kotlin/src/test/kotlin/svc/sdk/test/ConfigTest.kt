package svc.sdk.test

import com.fasterxml.jackson.databind.ObjectMapper
import java.io.File
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import svc.sdk.ConfigExport
import svc.sdk.ConfigProcessing
import svc.sdk.ConfigProject
import svc.sdk.LeverArm
import svc.sdk.ProcessingConfig
import svc.sdk.ProjectConfig
import svc.sdk.ShorthandConfig
import svc.sdk.ShorthandImu
import svc.sdk.SvcException
import svc.sdk.processingConfigFromJson
import svc.sdk.processingConfigToJson

/** The processing configuration as Kotlin values: read, built in code, written, refused. */
class ConfigTest {
    private val json = ObjectMapper()

    @Test
    fun `the samples read as typed records and a project built in code writes the service's JSON`() {
        val vendor = processingConfigFromJson(File(Paths.samples, "project.json").readText())
        val project = (vendor as ProcessingConfig.Project).config
        assertEquals("nmea", project.project.kind)
        assertEquals(listOf("SBET: 10Hz", "ASCII: 10Hz", "KML: 1Hz"), project.exports.map { it.profile })
        // A change made the Kotlin way, then written: the rest of the sample is kept.
        val marine = project.copy(processing = project.processing.copy(motionProfile = "marine"))
        val written = json.readTree(processingConfigToJson(ProcessingConfig.Project(marine)))
        assertEquals("marine", written["processing"]["motionProfile"].asText())
        assertEquals(3, written["exports"].size())

        val short = (Paths.sampleConfig() as ProcessingConfig.Shorthand).config
        assertEquals(LeverArm(0.12, 0.0, -1.5), short.imu?.leverArm)

        val built = ProcessingConfig.Project(
            ProjectConfig(
                project = ConfigProject(kind = "sbgECom", path = "rover/"),
                processing = ConfigProcessing(kind = "insSingle", extra = mapOf("smoothing" to "true")),
                exports = listOf(ConfigExport(profile = "SBET: 200Hz")),
            ),
        )
        assertEquals(
            json.readTree(
                """{"version": "1.0", "project": {"type": "sbgECom", "path": "rover/"},
                   "processing": {"type": "insSingle", "smoothing": true},
                   "exports": [{"profile": "SBET: 200Hz"}]}""",
            ),
            json.readTree(processingConfigToJson(built)),
        )
    }

    @Test
    fun `a bad configuration is an InvalidInput that names the field`() {
        val absolute = assertThrows<SvcException.InvalidInput> {
            processingConfigFromJson("""{"version": "1.0", "project": {"type": "sbgECom", "path": "/data"}, "processing": {"type": "insSingle"}}""")
        }
        assertTrue(absolute.reason.contains("project.path"), absolute.reason)
        val shadow = ProcessingConfig.Shorthand(
            ShorthandConfig(imu = ShorthandImu(file = "imu.csv", extra = mapOf("file" to "\"other.csv\""))),
        )
        val e = assertThrows<SvcException.InvalidInput> { processingConfigToJson(shadow) }
        assertTrue(e.reason.contains("imu.extra") && e.reason.contains("field of its own"), e.reason)
        assertThrows<SvcException.InvalidInput> { processingConfigToJson(ProcessingConfig.Json("not json")) }
    }
}
