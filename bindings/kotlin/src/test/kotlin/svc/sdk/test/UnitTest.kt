package svc.sdk.test

import com.fasterxml.jackson.databind.ObjectMapper
import java.net.InetSocketAddress
import java.net.Socket
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.ApplyOptions
import svc.sdk.ByteLink
import svc.sdk.InsUnit
import svc.sdk.LinkException
import svc.sdk.SvcException
import svc.sdk.UserName

/** A ByteLink over a TCP socket, as an app writes one over USB serial or BLE. */
class SocketLink(host: String, port: Int) : ByteLink, AutoCloseable {
    private val socket = Socket().apply {
        connect(InetSocketAddress(host, port), 5_000)
        tcpNoDelay = true
    }

    override suspend fun read(maxBytes: UInt): ByteArray = withContext(Dispatchers.IO) {
        val buffer = ByteArray(maxBytes.toInt())
        val n = try {
            socket.getInputStream().read(buffer)
        } catch (e: java.io.IOException) {
            throw LinkException.Io(e.toString())
        }
        if (n <= 0) ByteArray(0) else buffer.copyOf(n)
    }

    override suspend fun write(data: ByteArray) = withContext(Dispatchers.IO) {
        socket.getOutputStream().write(data)
        socket.getOutputStream().flush()
    }

    override fun close() = socket.close()
}

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnitTest {
    private val emulator = Emulator()
    private val json = ObjectMapper()

    @AfterAll
    fun stop() = emulator.close()

    private suspend fun configure(unit: InsUnit, label: String) {
        unit.login(UserName.Setup, "")
        assertEquals(UserName.Setup, unit.user())
        val info = unit.info()
        assertTrue(info.serialNumber.isNotEmpty(), "$info")
        val outcome = unit.write("""{"oem":{"label":"$label"}}""", false)
        assertFalse(outcome.needReboot)
        assertEquals("\"$label\"", unit.node("oem/label"))
        assertEquals(label, json.readTree(unit.settings()).at("/oem/label").asText())
        // Apply a wanted tree: only what differs is written, then read back.
        val report = unit.applyWanted("""{"oem":{"label":"$label!"}}""", ApplyOptions(lock = true))
        assertEquals(listOf("oem/label"), report.changed)
        assertTrue(report.written)
        assertEquals("\"$label!\"", unit.node("oem/label"))
        unit.logout()
    }

    @Test
    fun `configure the unit over HTTP`() = runBlocking {
        configure(InsUnit.http(emulator.text("device_url")), "over http")
    }

    @Test
    fun `configure the unit over the serial TCP bridge`() = runBlocking {
        configure(InsUnit.serialTcp(emulator.text("device_serial_tcp")), "over tcp")
    }

    @Test
    fun `configure the unit over a ByteLink written in Kotlin`() = runBlocking {
        val (host, port) = emulator.text("device_serial_tcp").split(":")
        SocketLink(host, port.toInt()).use { link ->
            val unit = InsUnit.overLink(link, "kotlin socket")
            assertEquals("kotlin socket", unit.link())
            configure(unit, "over a byte link")
            assertTrue(unit.export().length > 1000)
        }
    }

    @Test
    fun `typed errors - 422 with its node errors, 409 lock, 401`() = runBlocking {
        val url = emulator.text("device_url")
        val a = InsUnit.http(url)
        val b = InsUnit.http(url)
        a.login(UserName.Setup, "")
        b.login(UserName.Setup, "")

        val invalid = assertThrows<SvcException.InvalidInput> {
            runBlocking {
                a.write(
                    """{"output":{"comA":{"messages":{"imuShort":"10ms","noSuchMessage":"10ms"}},"comB":{"messages":{"ekfNav":"7ms"}}}}""",
                    false,
                )
            }
        }
        assertEquals(422.toUShort(), invalid.status)
        assertEquals(
            setOf("output/comA/messages/noSuchMessage", "output/comB/messages/ekfNav"),
            invalid.nodeErrors.map { it.path }.toSet(),
        )
        assertTrue(invalid.nodeErrors.all { it.message.isNotEmpty() })

        a.lock()
        val locked = assertThrows<SvcException.Conflict> { runBlocking { b.write("""{"oem":{"label":"b"}}""", false) } }
        assertEquals(409.toUShort(), locked.status)
        assertEquals("updateSettings", locked.operation)
        // Locks nest: the inner unlock gives back the inner hold only.
        a.lock()
        a.unlock()
        assertThrows<SvcException.Conflict> { runBlocking { b.write("""{"oem":{"label":"b"}}""", false) } }
        a.unlock()
        b.write("""{"oem":{"label":"b"}}""", false)
        // Giving back a lock the session does not hold is refused before sending.
        assertThrows<SvcException.InvalidInput> { runBlocking { a.unlock() } }

        val refused = assertThrows<SvcException.Authentication> {
            runBlocking { InsUnit.http(url).login(UserName.Factory, "pa55-kotlin") }
        }
        assertEquals(401.toUShort(), refused.status)
        assertFalse(refused.toString().contains("pa55-kotlin"))

        assertThrows<SvcException.InvalidInput> { InsUnit.http("ftp://unit") }
        assertThrows<SvcException.Unreachable> { runBlocking { InsUnit.serialTcp("127.0.0.1:1") } }
        Unit
    }
}
