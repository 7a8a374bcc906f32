package svc.sdk

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * The stream as a cold [Flow] of its items: each [LiveItem.Record], and a
 * [LiveItem.Dropped] where frames were dropped because the collector did not keep up.
 * The flow completes when the stream ends and throws [SvcException] when its source
 * fails. Cancelling the collecting coroutine (a `viewModelScope` cleared, a `LaunchedEffect`
 * left) takes nothing from the stream and stops it ([LiveStream.stop]), so one stream is
 * collected once:
 *
 * ```
 * LaunchedEffect(unit) {
 *     unit.subscribe(listOf("ekfNav")).asFlow().collect { item ->
 *         if (item is LiveItem.Record) position = item.record.value("latitude") to item.record.value("longitude")
 *     }
 * }
 * ```
 */
fun LiveStream.asFlow(): Flow<LiveItem> = flow {
    try {
        while (true) {
            val item = next() ?: break
            emit(item)
        }
    } finally {
        stop()
    }
}

/** The records only, dropped frames counted in [LiveStream.stats] (see [asFlow]). */
fun LiveStream.records(): Flow<LiveRecord> = flow {
    asFlow().collect { item -> if (item is LiveItem.Record) emit(item.record) }
}

/** The value of column [name] (`latitude`, `velN`, …), `null` when absent. */
fun LiveRecord.value(name: String): Double? = values.firstOrNull { it.name == name }?.value
