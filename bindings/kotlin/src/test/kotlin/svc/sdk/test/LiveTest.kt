package svc.sdk.test

import java.time.Duration
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.FixLevel
import svc.sdk.InsUnit
import svc.sdk.LiveItem
import svc.sdk.LiveStream
import svc.sdk.ReadyCriteria
import svc.sdk.SvcException
import svc.sdk.UserName
import svc.sdk.asFlow
import svc.sdk.records
import svc.sdk.value

/** The unit's live output logs from Kotlin: a Flow over the serial bridge beside other calls, cancellation, readiness. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LiveTest {
    // A unit that takes 6 s after each power-on to be ready to log: long enough that a
    // reboot and its wait (up to 2 s on a loaded machine) leave the early check early.
    private val emulator = Emulator(extra = listOf("--device-startup-seconds", "6"))

    @AfterAll
    fun stop() = emulator.close()

    private suspend fun portA() {
        val http = InsUnit.http(emulator.deviceUrl)
        http.login(UserName.Setup, "")
        http.write("""{"output":{"comA":{"messages":{"ekfNav":"10ms","utcTime":"100ms","gps1Pos":"100ms"}}}}""", false)
    }

    @Test
    fun `records flow in order while the session calls the unit`() = runBlocking {
        portA()
        val unit = InsUnit.serialTcp(emulator.text("device_serial_tcp"))
        val stream = unit.subscribe(listOf("ekfNav"))
        val calls = async(Dispatchers.Default) { repeat(5) { assertTrue(unit.info().serialNumber.isNotEmpty()) } }
        val records = stream.records().take(40).toList()
        calls.await()
        assertTrue(records.all { it.message == "ekfNav" })
        val stamps = records.map { it.timestamp!! }
        assertEquals(stamps.sorted(), stamps)
        assertTrue(records.all { (it.value("latitude") ?: 0.0) in 48.8..48.9 })
        // The flow closed the stream when it completed.
        assertNull(stream.next())
        unit.close()

        // A stream keeps the link open when its unit object is freed (closed here, as the
        // garbage collector would).
        val other = InsUnit.serialTcp(emulator.text("device_serial_tcp"))
        val kept = other.subscribe(listOf("ekfNav"))
        other.close()
        assertEquals(20, kept.records().take(20).toList().size)
    }

    @Test
    fun `a cancelled collector closes the stream and a slow one is told what it missed`() = runBlocking {
        portA()
        val unit = InsUnit.serialTcp(emulator.text("device_serial_tcp"))
        val stream = unit.subscribe(listOf("ekfNav"))
        var seen = 0
        val job = launch(Dispatchers.Default) { stream.asFlow().collect { seen++ } }
        delay(300)
        job.cancelAndJoin()
        assertTrue(seen > 5, "$seen items")
        assertNull(stream.next())

        val slow = unit.subscribe(listOf("ekfNav"), 4u)
        delay(300)
        val items = slow.asFlow().take(6).toList()
        val dropped = items.filterIsInstance<LiveItem.Dropped>().sumOf { it.frames }
        assertTrue(dropped > 5, "$items")
        assertTrue(slow.stats().dropped >= dropped)
    }

    @Test
    fun `an Ethernet output over UDP, after the reboot its port settings need`() = runBlocking {
        val stream = LiveStream.udp("127.0.0.1:0", listOf("ekfNav"))
        val port = stream.localAddress()!!.substringAfterLast(':').toInt()
        val setup = InsUnit.http(emulator.deviceUrl)
        setup.login(UserName.Setup, "")
        setup.write("""{"ports":{"eth3":{"protocol":"udp","udpIp":"127.0.0.1","udpOutPort":$port}},""" +
            """"output":{"eth3":{"messages":{"ekfNav":"10ms"}}}}""", false)
        setup.save()
        setup.reboot()
        val records = withTimeout(30_000) { stream.records().take(20).toList() }
        assertTrue(records.all { it.message == "ekfNav" })
        assertTrue(stream.source().startsWith("udp 127.0.0.1:"))
    }

    @Test
    fun `wait for the unit to be ready, and what was missing`() = runBlocking {
        portA()
        val unit = InsUnit.serialTcp(emulator.text("device_serial_tcp"))
        // Just after a reboot the unit is not ready: the filter is not aligned yet.
        val setup = InsUnit.http(emulator.deviceUrl)
        setup.login(UserName.Setup, "")
        setup.reboot()
        setup.waitUntilBack(Duration.ofSeconds(30))
        val early = assertThrows<SvcException.Timeout> {
            runBlocking { unit.waitReady(Duration.ofMillis(300), ReadyCriteria(FixLevel.RTK_FIXED, true, true)) }
        }
        assertTrue(early.details()!!.contains("at least rtkFixed"), early.details())
        val ready = unit.waitReady(Duration.ofSeconds(20))
        assertEquals("NavPosition", ready.filter)
        assertEquals(true, ready.utcValid)

        assertThrows<SvcException.InvalidInput> { InsUnit.http(emulator.deviceUrl).subscribe() }
        assertThrows<SvcException.InvalidInput> { unit.subscribe(listOf("ekfNavv")) }
        assertThrows<SvcException.Unreachable> { runBlocking { LiveStream.follow("/nonexistent/session.bin") } }
        Unit
    }
}
