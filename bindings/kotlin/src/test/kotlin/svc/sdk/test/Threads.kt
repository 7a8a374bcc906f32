package svc.sdk.test

import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertTrue

/**
 * `calls` calls of `right(thread, call)` on each of `threads` threads at once: how many
 * were wrong on each thread (the pool is shut down and must end within 10 s).
 */
fun wrongOnThreads(threads: Int, calls: Int, timeoutSeconds: Long, right: (thread: Int, call: Int) -> Boolean): List<Int> {
    val pool = Executors.newFixedThreadPool(threads)
    try {
        val results = (0 until threads).map { thread ->
            pool.submit(Callable { (0 until calls).count { call -> !right(thread, call) } })
        }
        return results.map { it.get(timeoutSeconds, TimeUnit.SECONDS) }
    } finally {
        pool.shutdownNow()
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS))
    }
}
