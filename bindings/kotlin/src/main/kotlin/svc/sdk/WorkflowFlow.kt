package svc.sdk

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * The workflow's progress reports from its start as a cold [Flow]: every change of
 * stage in order, and the latest report of each stage (a slow collector skips the
 * reports superseded meanwhile; the workflow never waits for it). The flow completes
 * after [WorkflowProgress.Done], or when the workflow ends otherwise. Each collection
 * reads a stream of its own, closed when the collection ends:
 *
 * ```
 * viewModelScope.launch {
 *     task.progressFlow().collect { progress -> state.value = progress }
 * }
 * ```
 */
fun WorkflowTask.progressFlow(): Flow<WorkflowProgress> = flow {
    progress().use { stream ->
        while (true) {
            val report = stream.next() ?: break
            emit(report)
        }
    }
}
