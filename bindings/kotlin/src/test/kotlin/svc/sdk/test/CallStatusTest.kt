package svc.sdk.test

import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import svc.sdk.SvcException
import svc.sdk.settingsDiff

/**
 * The generated code reuses the call status of each call into Rust (a per-thread pool,
 * see bindings/uniffi/bindgen/src/kotlin.rs): an error never outlives its call, a call
 * made while another is in progress on the thread gets its own status, and threads do
 * not share one.
 */
class CallStatusTest {
    /** One call's outcome, as text: the changed paths, or which tree the error names. */
    private fun outcome(old: String, new: String): String =
        try {
            settingsDiff(old, new).changed.joinToString(",")
        } catch (e: SvcException.InvalidInput) {
            if (e.reason.contains("the old tree")) "old not JSON" else if (e.reason.contains("the new tree")) "new not JSON" else e.reason
        }

    /** Calls that fail and succeed in turn, each checked against its own expected outcome. */
    private val calls = listOf(
        Triple("{", "{}", "old not JSON"),
        Triple("""{"a":1}""", """{"a":2}""", "a"),
        Triple("{}", "[", "new not JSON"),
        Triple("""{"a":1,"b":true}""", """{"a":1,"b":false}""", "b"),
        Triple("""{"a":1}""", """{"a":1}""", ""),
        Triple("{}", "{", "new not JSON"),
        Triple("{}", """{"c":null}""", "c"),
    )

    @Test
    fun `an error status never leaks into the next call`() {
        // Lifting an error frees its buffer through another call into Rust, made while
        // the failed call's status is still being read.
        repeat(50) {
            for ((old, new, expected) in calls) assertEquals(expected, outcome(old, new))
        }
    }

    @Test
    fun `threads calling at once each get their own statuses`() {
        val pool = Executors.newFixedThreadPool(8)
        try {
            val results = (0 until 8).map { thread ->
                pool.submit(Callable {
                    var wrong = 0
                    repeat(2_000) { i ->
                        val (old, new, expected) = calls[(i + thread) % calls.size]
                        if (outcome(old, new) != expected) wrong++
                    }
                    wrong
                })
            }
            assertEquals(List(8) { 0 }, results.map { it.get(60, TimeUnit.SECONDS) })
        } finally {
            pool.shutdownNow()
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS))
        }
    }
}
