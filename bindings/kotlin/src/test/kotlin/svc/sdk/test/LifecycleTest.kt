package svc.sdk.test

import com.sun.jna.Library
import com.sun.jna.Native
import com.sun.jna.Structure
import java.io.File
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.CloudClient
import svc.sdk.InsUnit
import svc.sdk.SettingsTree
import svc.sdk.SvcException
import svc.sdk.UserName
import svc.sdk.settingsDiff

/** glibc's `mallinfo2()`: the native heap in use, Rust's allocations included. */
@Structure.FieldOrder("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
open class MallInfo2 : Structure() {
    @JvmField var arena: Long = 0
    @JvmField var ordblks: Long = 0
    @JvmField var smblks: Long = 0
    @JvmField var hblks: Long = 0
    @JvmField var hblkhd: Long = 0
    @JvmField var usmblks: Long = 0
    @JvmField var fsmblks: Long = 0
    @JvmField var uordblks: Long = 0
    @JvmField var fordblks: Long = 0
    @JvmField var keepcost: Long = 0

    class ByValue : MallInfo2(), Structure.ByValue
}

interface LibC : Library {
    fun mallinfo2(): MallInfo2.ByValue
}

/** Objects after `close()`, and a long loop of calls whose memory stays flat. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LifecycleTest {
    private val emulator = Emulator()

    @AfterAll
    fun stop() = emulator.close()

    @Test
    fun `an object used after close() throws, it does not crash`() = runBlocking {
        val tree = SettingsTree.fromJson("""{"a":1}""")
        assertEquals(1L, tree.leafCount())
        tree.close()
        tree.close()
        assertThrows<IllegalStateException> { tree.leafCount() }
        val client = emulator.client()
        client.close()
        assertThrows<IllegalStateException> { runBlocking { client.serverInfo() } }
        val unit = InsUnit.http(emulator.deviceUrl)
        unit.close()
        assertThrows<IllegalStateException> { runBlocking { unit.info() } }
        Unit
    }

    private val libc: LibC = Native.load("c", LibC::class.java)

    /** Native heap in use, JVM heap in use and the process's resident set (bytes). */
    private fun memory(): Triple<Long, Long, Long> {
        repeat(3) {
            System.gc()
            Thread.sleep(50)
        }
        val native = libc.mallinfo2().let { it.uordblks + it.hblkhd }
        val jvm = Runtime.getRuntime().let { it.totalMemory() - it.freeMemory() }
        val rss = File("/proc/self/status").readLines().first { it.startsWith("VmRSS:") }
            .split(Regex("\\s+"))[1].toLong() * 1024
        return Triple(native, jvm, rss)
    }

    @Test
    fun `10,000 calls leave the memory flat`() = runBlocking {
        val unitTree = File(Paths.root, "crates/svc-test-support/src/settings/unit_default.json").readText()
        val changed = unitTree.replaceFirst("\"label\": \"\"", "\"label\": \"leak check\"")
        check(changed != unitTree)
        val client = emulator.client()
        val unit = InsUnit.http(emulator.deviceUrl)
        unit.login(UserName.Setup, "")
        // Each call in turn: a sync call moving 32 KB each way, an object made, used
        // and closed, an async call failing (its error crosses), an async call over HTTP.
        suspend fun call(i: Int) {
            when (i % 4) {
                0 -> check(settingsDiff(unitTree, changed).changed.size == 1)
                1 -> SettingsTree.fromJson(changed).use { tree -> check(tree.diffJson(unitTree).changed.size == 1) }
                2 -> try {
                    client.getContainer("not-a-uuid")
                } catch (e: SvcException.InvalidInput) {
                    check(e.reason.isNotEmpty())
                }
                else -> check(unit.node("oem/label").isNotEmpty())
            }
        }
        repeat(1_000) { call(it) }
        val mb = { bytes: Long -> bytes / 1e6 }
        // One window of 10,000 calls: the time, and the memory before and after.
        suspend fun window(): Pair<String, Long> {
            val (nativeBefore, jvmBefore, rssBefore) = memory()
            val started = System.nanoTime()
            repeat(10_000) { call(it) }
            val seconds = (System.nanoTime() - started) / 1e9
            val (nativeAfter, jvmAfter, rssAfter) = memory()
            val report = String.format(
                "10,000 calls (settingsDiff of 32 KB trees, SettingsTree made, used and closed, a failing async call, a unit call over HTTP; 2,500 each) in %.1f s: " +
                    "native heap in use %.1f -> %.1f MB (%+.2f MB), JVM heap in use %.1f -> %.1f MB (%+.2f MB), resident set %.1f -> %.1f MB",
                seconds, mb(nativeBefore), mb(nativeAfter), mb(nativeAfter - nativeBefore),
                mb(jvmBefore), mb(jvmAfter), mb(jvmAfter - jvmBefore), mb(rssBefore), mb(rssAfter),
            )
            assertTrue(jvmAfter - jvmBefore < 8_000_000, report)
            return report to nativeAfter - nativeBefore
        }
        var (report, native) = window()
        // A leak of the smallest buffer crossing here (an error, ~200 bytes) per call
        // would be 0.5 MB a window; of a tree or a patch, tens of MB. A window over the
        // bound is checked by up to two more: a leak grows again in every one, while the
        // allocator's arenas (threads of the runtime, the HTTP pool) settle.
        repeat(2) {
            if (native >= 2_000_000) {
                val (again, grown) = window()
                report = "$report; then $again"
                native = grown
            }
        }
        println(report)
        File(Paths.root, "target/kotlin-memory.txt").writeText(report + "\n")
        assertTrue(native < 2_000_000, report)
        client.close()
        unit.close()
    }

    @Test
    fun `CloudClient made and closed many times`() {
        repeat(200) { CloudClient.create(emulator.config()).close() }
    }
}
