package svc.sdk.consumer

import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import svc.sdk.ApplyOptions
import svc.sdk.InsUnit
import svc.sdk.UserName
import svc.sdk.settingsDiff

/** What an application does with the artifact, and where the library came from. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerTest {
    /** `svc emulator`: its one JSON line gives the addresses (read without a JSON library). */
    private val emulator: Process =
        ProcessBuilder(System.getProperty("svc.binary"), "emulator", "--no-device-pty")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
    private val line: String = emulator.inputStream.bufferedReader().readLine()
        ?: error("the emulator exited before printing its addresses")

    private fun field(name: String): String =
        Regex("\"$name\"\\s*:\\s*\"([^\"]*)\"").find(line)?.groupValues?.get(1) ?: error("no $name in $line")

    @AfterAll
    fun stop() {
        emulator.destroy()
        if (!emulator.waitFor(10, TimeUnit.SECONDS)) emulator.destroyForcibly()
    }

    @Test
    fun `a settings diff`() {
        val patch = settingsDiff("""{"gnss":{"rate":1,"mode":"rtk"}}""", """{"gnss":{"rate":5,"mode":"rtk"}}""")
        assertEquals(listOf("gnss/rate"), patch.changed)
        assertEquals("""{"gnss":{"rate":5}}""", patch.tree)
    }

    @Test
    fun `a unit session against the emulator`() = runBlocking {
        val unit = InsUnit.http(field("device_url"))
        unit.login(UserName.Setup, "")
        assertTrue(unit.info().serialNumber.isNotEmpty())
        val report = unit.applyWanted("""{"oem":{"label":"from the maven artifact"}}""", ApplyOptions(lock = true))
        assertEquals(listOf("oem/label"), report.changed)
        assertEquals("\"from the maven artifact\"", unit.node("oem/label"))
        unit.logout()
    }

    @Test
    fun `the library was extracted from the artifact's jar`() {
        settingsDiff("{}", "{}")
        assertEquals(null, System.getProperty("jna.library.path"))
        // JNA found it on the class path (linux-x86-64/ or linux-aarch64/ in the jar)
        // and extracted it to a temporary file.
        val file = com.sun.jna.NativeLibrary.getInstance("svc_ffi").file
        assertTrue(file != null && !file.path.contains("/target/"), "$file")
    }
}
