package svc.sdk.test

import java.io.File
import java.nio.file.Files
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.ErrorKind
import svc.sdk.InsUnit
import svc.sdk.SvcException
import svc.sdk.UserName

/** The unit's recorded sessions over FTP from Kotlin: list, download, delete, typed errors. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LoggerFilesTest {
    private val emulator = Emulator()
    private val ftp get() = emulator.text("device_ftp")

    @AfterAll
    fun stop() = emulator.close()

    @Test
    fun `a recorded session is listed, downloaded and deleted with the right`() = runBlocking {
        val unit = InsUnit.http(emulator.deviceUrl)
        unit.loggerStart()
        delay(300)
        unit.loggerStop()

        val viewer = unit.loggerFiles(ftp)
        assertEquals("viewer", viewer.user())
        val sessions = viewer.sessions()
        assertEquals(1, sessions.size)
        val session = sessions[0]
        assertEquals("session", session.name)
        assertEquals(false, session.recording)
        assertEquals("session.001", session.files[0].name)
        assertEquals(session.files.sumOf { it.size }, session.size)
        assertTrue(session.size > 0L)

        val dest = Files.createTempDirectory("sessions").toFile()
        try {
            val done = viewer.download("session", dest.path)
            assertEquals(session.size, done.bytes)
            assertFalse(done.deleted)
            val file = File(dest, "session/session.001")
            assertEquals(listOf(file.path), done.files)
            assertEquals(session.size, file.length())
            assertFalse(File(dest, "session/session.001.part").exists())

            // A viewer may not delete: 550, typed; the session stays.
            val refused = assertThrows<SvcException.PermissionDenied> { runBlocking { viewer.delete("session") } }
            assertEquals(ErrorKind.PERMISSION_DENIED, refused.kind())
            assertEquals(550, refused.status())
            assertThrows<SvcException.NotFound> { runBlocking { viewer.download("nope", dest.path) } }
            assertThrows<SvcException.InvalidInput> { runBlocking { viewer.download("../etc", dest.path) } }

            // An operator's session: the FTP user is the session's; deleted once downloaded.
            unit.login(UserName.Operator, "")
            val operator = unit.loggerFiles(ftp)
            assertEquals("operator", operator.user())
            val again = File(dest, "again")
            val taken = operator.download("session", again.path, deleteAfter = true)
            assertTrue(taken.deleted)
            assertTrue(File(again, "session/session.001").readBytes().contentEquals(file.readBytes()))
            assertEquals(emptyList<Any>(), operator.sessions())
            unit.logout()
        } finally {
            dest.deleteRecursively()
        }
    }

    @Test
    fun `wrong passwords and missing addresses are typed, without the password`() = runBlocking {
        val unit = InsUnit.http(emulator.deviceUrl)
        val wrong = unit.loggerFiles(ftp, UserName.Factory, "pa55-kotlin")
        val e = assertThrows<SvcException.Authentication> { runBlocking { wrong.sessions() } }
        assertEquals(530, e.status())
        assertFalse(e.reason.contains("pa55-kotlin"), e.reason)
        assertThrows<SvcException.InvalidInput> { unit.loggerFiles(ftp, null, "alone") }
        // A unit over a serial link has no host: the FTP address is needed.
        val serial = InsUnit.serialTcp(emulator.text("device_serial_tcp"))
        assertThrows<SvcException.InvalidInput> { serial.loggerFiles() }
        assertEquals(ftp, serial.loggerFiles(ftp).address())
    }
}
