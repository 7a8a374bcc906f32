package svc.sdk.test

import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout

/** Polls `condition` every 10 ms until it holds, failing after `timeoutMs`. */
suspend fun eventually(timeoutMs: Long = 60_000, what: String = "the condition", condition: () -> Boolean) {
    try {
        withTimeout(timeoutMs) {
            while (!condition()) delay(10)
        }
    } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
        throw AssertionError("$what did not happen within $timeoutMs ms")
    }
}
