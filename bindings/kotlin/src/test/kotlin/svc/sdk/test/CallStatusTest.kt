package svc.sdk.test

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import svc.sdk.SvcException
import svc.sdk.settingsApply

/**
 * The generated code reuses the call status of each call into Rust (a per-thread pool,
 * see bindings/uniffi/bindgen/src/kotlin.rs): an error never outlives its call, a call
 * made while another is in progress on the thread gets its own status, and threads do
 * not share one. (`settingsApply` crosses through JNA only; `settingsDiff` goes over
 * JNI when it succeeds.)
 */
class CallStatusTest {
    /** One call's outcome, as text: the tree written, or which argument the error names. */
    private fun outcome(tree: String, patch: String): String =
        try {
            settingsApply(tree, patch)
        } catch (e: SvcException.InvalidInput) {
            if (e.reason.startsWith("tree ")) "tree not JSON" else if (e.reason.startsWith("patch ")) "patch not JSON" else e.reason
        }

    /** Calls that fail and succeed in turn, each checked against its own expected outcome. */
    private val calls = listOf(
        Triple("{", "{}", "tree not JSON"),
        Triple("""{"a":1}""", """{"a":2}""", """{"a":2}"""),
        Triple("{}", "[", "patch not JSON"),
        Triple("""{"a":1,"b":true}""", """{"b":false}""", """{"a":1,"b":false}"""),
        Triple("""{"a":1}""", "{}", """{"a":1}"""),
        Triple("{}", "{", "patch not JSON"),
        Triple("{}", """{"c":"x"}""", """{"c":"x"}"""),
    )

    @Test
    fun `the generated code pools its statuses, one per call in progress on the thread`() {
        // The patch is in the code these tests run (a missing one is not only slower).
        val field = Class.forName("svc.sdk.Svc_ffiKt").getDeclaredField("uniffiCallStatuses")
        field.isAccessible = true
        val pool = field.get(null) as ThreadLocal<*>
        fun size() = (pool.get() as List<*>).size
        var sizes = listOf<Int>()
        val thread = Thread {
            val fresh = size()
            // A call lowers its arguments (a call into Rust each) while its own call is
            // being made: two statuses, each back in the pool afterwards.
            settingsApply("""{"a":1}""", """{"a":2}""")
            val afterApply = size()
            assertEquals("tree not JSON", outcome("{", "{}"))
            sizes = listOf(fresh, afterApply, size())
        }
        thread.start()
        thread.join()
        assertEquals(listOf(0, 2, 2), sizes)
    }

    @Test
    fun `an error status never leaks into the next call`() {
        // A failed call leaves its status set to the error: the next call from the pool
        // must not see it.
        repeat(50) {
            for ((old, new, expected) in calls) assertEquals(expected, outcome(old, new))
        }
    }

    @Test
    fun `threads calling at once each get their own statuses`() {
        val wrong = wrongOnThreads(8, 2_000, 60) { thread, i ->
            val (old, new, expected) = calls[(i + thread) % calls.size]
            outcome(old, new) == expected
        }
        assertEquals(List(8) { 0 }, wrong)
    }
}
