package svc.sdk.test

import com.fasterxml.jackson.databind.ObjectMapper
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.ApplyOptions
import svc.sdk.ByteLink
import svc.sdk.ErrorKind
import svc.sdk.InsUnit
import svc.sdk.LinkException
import svc.sdk.SerialOptions
import svc.sdk.SvcException
import svc.sdk.UserName

/** A ByteLink over a TCP socket, as an app writes one over USB serial or BLE. */
class SocketLink(host: String, port: Int) : ByteLink, AutoCloseable {
    private val socket = Socket().apply {
        connect(InetSocketAddress(host, port), 5_000)
        tcpNoDelay = true
    }

    override suspend fun read(maxBytes: Int): ByteArray = withContext(Dispatchers.IO) {
        val buffer = ByteArray(maxBytes)
        val n = try {
            socket.getInputStream().read(buffer)
        } catch (e: java.io.IOException) {
            if (socket.isClosed) throw LinkException.Closed()
            throw LinkException.Io(e.toString())
        }
        // -1: the other side closed the connection (0 bytes would mean "nothing yet").
        if (n < 0) throw LinkException.Closed()
        buffer.copyOf(n)
    }

    override suspend fun write(data: ByteArray) = withContext(Dispatchers.IO) {
        try {
            socket.getOutputStream().write(data)
            socket.getOutputStream().flush()
        } catch (e: java.io.IOException) {
            throw LinkException.Io(e.toString())
        }
    }

    override fun close() = socket.close()
}

/**
 * A link as USB and BLE stacks behave: every third read gives nothing (a USB serial
 * driver's read returns empty every 16 ms or so while the unit is silent), the others
 * give pieces of 7 or 512 bytes; writes come in pieces of `SerialOptions.maxWriteBytes`
 * at most. Once `unplugNextWrite` is set, the next write sends 6 bytes and the link is
 * gone (a cable pulled mid-request).
 */
class UsbLikeLink(private val inner: SocketLink) : ByteLink, AutoCloseable {
    private var pending = ByteArray(0)
    private val reads = AtomicInteger()
    val emptyReads = AtomicInteger()
    val largestWrite = AtomicInteger()
    val unplugNextWrite = AtomicBoolean(false)
    private val unplugged = AtomicBoolean(false)

    override suspend fun read(maxBytes: Int): ByteArray {
        if (unplugged.get()) throw LinkException.Closed()
        val read = reads.getAndIncrement()
        if (read % 3 == 0) {
            emptyReads.incrementAndGet()
            return ByteArray(0)
        }
        if (pending.isEmpty()) pending = inner.read(maxBytes)
        val n = minOf(pending.size, if (read % 3 == 1) 7 else 512, maxBytes)
        return pending.copyOf(n).also { pending = pending.copyOfRange(n, pending.size) }
    }

    override suspend fun write(data: ByteArray) {
        largestWrite.accumulateAndGet(data.size, ::maxOf)
        if (unplugged.get()) throw LinkException.Closed()
        if (unplugNextWrite.get()) {
            inner.write(data.copyOf(minOf(6, data.size)))
            inner.close()
            unplugged.set(true)
            throw LinkException.Io("USB device detached")
        }
        inner.write(data)
    }

    override fun close() = inner.close()
}

/** A link over which the unit never answers: each read waits 20 ms and gives nothing. */
class SilentLink : ByteLink {
    val reads = AtomicInteger()

    override suspend fun read(maxBytes: Int): ByteArray {
        reads.incrementAndGet()
        delay(20)
        return ByteArray(0)
    }

    override suspend fun write(data: ByteArray) {}
}

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnitTest {
    private val emulator = Emulator()
    private val json = ObjectMapper()

    @AfterAll
    fun stop() = emulator.close()

    private fun link() = emulator.bridge.let { (host, port) -> SocketLink(host, port) }

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
        configure(InsUnit.http(emulator.deviceUrl), "over http")
    }

    @Test
    fun `configure the unit over the serial TCP bridge`() = runBlocking {
        configure(InsUnit.serialTcp(emulator.text("device_serial_tcp")), "over tcp")
    }

    @Test
    fun `configure the unit over a ByteLink written in Kotlin`() = runBlocking {
        link().use { link ->
            val unit = InsUnit.overLink(link, "kotlin socket")
            assertEquals("kotlin socket", unit.link())
            configure(unit, "over a byte link")
            assertTrue(unit.export().length > 1000)
        }
    }

    @Test
    fun `a ByteLink with empty reads, fragmented reads and small writes`() = runBlocking {
        UsbLikeLink(link()).use { link ->
            val unit = InsUnit.overLink(link, "usb", SerialOptions(maxWriteBytes = 20))
            configure(unit, "through a usb-like link")
            assertTrue(unit.export().length > 1000)
            assertTrue(link.emptyReads.get() > 10, "${link.emptyReads}")
            assertEquals(20, link.largestWrite.get())
        }
    }

    @Test
    fun `a link unplugged mid-request fails the request clearly and applies nothing`() = runBlocking {
        val http = InsUnit.http(emulator.deviceUrl)
        http.login(UserName.Setup, "")
        val label = http.node("oem/label")
        UsbLikeLink(link()).use { link ->
            val unit = InsUnit.overLink(link, "usb serial")
            unit.login(UserName.Setup, "")
            link.unplugNextWrite.set(true)
            val e = assertThrows<SvcException.Unreachable> {
                runBlocking { unit.write("""{"oem":{"label":"half-written"}}""", false) }
            }
            assertEquals(ErrorKind.UNREACHABLE, e.kind())
            assertEquals("unit", e.side())
            assertTrue(e.reason.contains("usb serial"), e.reason)
            // Later requests fail at once: the link is closed.
            assertThrows<SvcException.Unreachable> { runBlocking { unit.info() } }
        }
        // The unit discarded the cut frame.
        assertEquals(label, http.node("oem/label"))
    }

    @Test
    fun `cancelling the coroutine cancels a unit call and its work`() = runBlocking {
        val link = SilentLink()
        val unit = InsUnit.overLink(link, "silent")
        val started = System.nanoTime()
        // Without cancellation the call would wait 3 answer timeouts of 3 s.
        assertNull(withTimeoutOrNull(300) { unit.info() })
        assertTrue(System.nanoTime() - started < 2_000_000_000L)
        // The work stopped: the link is not read any more.
        delay(100)
        val reads = link.reads.get()
        delay(300)
        assertEquals(reads, link.reads.get())
        // Over HTTP too, to a unit that accepts the connection and never answers.
        ServerSocket(0).use { hung ->
            val http = InsUnit.http("http://127.0.0.1:${hung.localPort}")
            val call = async { http.info() }
            delay(100)
            call.cancelAndJoin()
            assertTrue(call.isCancelled)
        }
    }

    @Test
    fun `a call from the main thread does not block it`() = runBlocking {
        // A single-thread dispatcher, as Android's main thread.
        val main = Executors.newSingleThreadExecutor().asCoroutineDispatcher()
        try {
            withContext(main) {
                val unit = InsUnit.overLink(SilentLink(), "silent")
                val call = async { unit.info() }
                var ticks = 0
                val ticker = launch {
                    while (true) {
                        delay(10)
                        ticks++
                    }
                }
                delay(500)
                ticker.cancelAndJoin()
                // The main thread kept running the ticker while the call waited.
                assertTrue(ticks >= 25, "$ticks ticks in 500 ms")
                assertFalse(call.isCompleted)
                call.cancelAndJoin()
            }
        } finally {
            main.close()
        }
    }

    @Test
    fun `typed errors - 422 with its node errors, 409 lock, 401`() = runBlocking {
        val url = emulator.deviceUrl
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
        assertEquals(422, invalid.status)
        assertEquals(
            setOf("output/comA/messages/noSuchMessage", "output/comB/messages/ekfNav"),
            invalid.nodeErrors.map { it.path }.toSet(),
        )
        assertTrue(invalid.nodeErrors.all { it.message.isNotEmpty() })

        a.lock()
        val locked = assertThrows<SvcException> { runBlocking { b.write("""{"oem":{"label":"b"}}""", false) } }
        // The common accessors, whatever the case.
        assertEquals(ErrorKind.CONFLICT, locked.kind())
        assertEquals(409, locked.status())
        assertEquals("updateSettings", locked.operation())
        assertFalse(locked.retryable())
        assertTrue(locked is SvcException.Conflict)
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
        assertEquals(401, refused.status)
        assertFalse(refused.toString().contains("pa55-kotlin"))

        assertThrows<SvcException.InvalidInput> { InsUnit.http("ftp://unit") }
        // An address reaching the unit's routes would turn every write into a restore of
        // the defaults or a reboot: refused before anything is sent.
        for (tail in listOf("/api/v1/settings/default#", "/api/v1/reboot?", "/?auth=x")) {
            val e = assertThrows<SvcException.InvalidInput> { InsUnit.http(url + tail) }
            assertTrue(e.toString().contains("not a unit address"), e.toString())
        }
        assertThrows<SvcException.Unreachable> { runBlocking { InsUnit.serialTcp("127.0.0.1:1") } }
        Unit
    }
}
