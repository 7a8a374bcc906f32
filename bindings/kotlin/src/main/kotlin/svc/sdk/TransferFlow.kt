package svc.sdk

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * The transfer's progress as a cold [Flow]: the snapshot now, then the latest one after
 * each change (a slow collector gets the newest, never a backlog, and never holds the
 * transfer up), completing after the snapshot whose `finished` is true. Each collection
 * reads a stream of its own, closed when the collection ends:
 *
 * ```
 * viewModelScope.launch {
 *     upload.progressFlow().collect { p -> state.value = p.doneBytes to p.totalBytes }
 * }
 * ```
 */
fun TransferTask.progressFlow(): Flow<TransferProgress> = flow {
    progressStream().use { stream ->
        while (true) {
            val snapshot = stream.next() ?: break
            emit(snapshot)
        }
    }
}
