package svc.sdk.test

import java.io.File
import java.net.ServerSocket
import java.nio.file.Files
import java.time.Duration
import java.util.Collections
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.CloudClient
import svc.sdk.ErrorKind
import svc.sdk.ProcessingConfig
import svc.sdk.ProcessingJob
import svc.sdk.ProcessingResult
import svc.sdk.ProcessingStatus
import svc.sdk.SvcException
import svc.sdk.Workflow
import svc.sdk.WorkflowListener
import svc.sdk.WorkflowOptions
import svc.sdk.WorkflowProgress
import svc.sdk.progressFlow

/** Collects the progress a workflow reports, from the SDK's threads. */
class Recorder : WorkflowListener {
    val seen: MutableList<WorkflowProgress> = Collections.synchronizedList(mutableListOf())

    override fun onProgress(progress: WorkflowProgress) {
        seen.add(progress)
    }

    fun done() = synchronized(seen) { seen.any { it is WorkflowProgress.Done } }
}

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkflowTest {
    private val emulator = Emulator(processingSeconds = 2)

    @AfterAll
    fun stop() = emulator.close()

    private fun job(out: File?) = ProcessingJob(
        inputs = listOf(File(Paths.samples, "rover.nmea").path, File(Paths.samples, "imu.csv").path),
        processingConfig = Paths.sampleConfig(),
        name = "kotlin test",
        outputFolder = out?.path,
    )

    // The organization runs one processing at a time: wait for the previous test's.
    private val options = WorkflowOptions(
        waitForFreeOrganization = true,
        pollInitial = Duration.ofMillis(50),
        pollMax = Duration.ofMillis(500),
    )

    @Test
    fun `the whole workflow with progress gives the trajectory svc process gives`() = runBlocking {
        val out = Files.createTempDirectory("svc-kotlin").toFile()
        val recorder = Recorder()
        Workflow(emulator.client()).use { workflow ->
            val task = workflow.start(job(out), options, recorder)
            // The same reports as a Flow, collected beside the listener.
            val flowed = async { task.progressFlow().toList() }
            val outcome = task.wait()
            val collected = flowed.await()
            assertTrue(collected.first() is WorkflowProgress.CreatingContainer, "$collected")
            assertTrue(collected.any { it is WorkflowProgress.Running }, "$collected")
            assertTrue(collected.last() is WorkflowProgress.Done, "$collected")
            // Collected again after the end: the whole history, then the end.
            assertTrue(task.progressFlow().toList().last() is WorkflowProgress.Done)
            assertTrue(outcome.succeeded, "$outcome")
            assertTrue(task.isFinished())
            assertEquals(ProcessingStatus.Processed, outcome.processing.status)
            assertEquals(ProcessingResult.Succeeded, outcome.processing.processingResult)
            assertEquals(outcome.processing.id, task.processingId())
            // The service returns the configuration submitted, as the same records.
            assertEquals(Paths.sampleConfig(), outcome.processing.processingConfig)
            assertTrue(outcome.downloaded.any { it.endsWith("trajectory.csv") }, "${outcome.downloaded}")
            // The pre-signed addresses are secrets: printing the outcome does not show them.
            assertTrue(!outcome.toString().contains("Signature="), outcome.toString())
        }
        val stages = recorder.seen.toList()
        assertTrue(stages.first() is WorkflowProgress.CreatingContainer, "$stages")
        assertTrue(stages.any { it is WorkflowProgress.Uploading }, "$stages")
        assertTrue(stages.any { it is WorkflowProgress.Running }, "$stages")
        assertTrue(stages.any { it is WorkflowProgress.Downloading }, "$stages")
        assertTrue(stages.last() is WorkflowProgress.Done, "$stages")

        // The command-line tool against the same emulator, same inputs.
        val cli = Files.createTempDirectory("svc-cli").toFile()
        val process = ProcessBuilder(
            Paths.svc.path, "process",
            File(Paths.samples, "rover.nmea").path, File(Paths.samples, "imu.csv").path,
            "--config", File(Paths.samples, "processing.json").path,
            "--out", cli.path, "--json", "--wait-for-organization",
        ).redirectErrorStream(true)
        process.environment().putAll(emulator.environment())
        val run = process.start()
        val printed = run.inputStream.bufferedReader().readText()
        assertEquals(0, run.waitFor(), printed)
        val ours = File(out, "trajectory.csv").readText()
        val theirs = File(cli, "trajectory.csv").readText()
        assertTrue(ours.lines().size > 10, ours)
        assertEquals(theirs, ours)
    }

    @Test
    fun `a cancelled wait or a closed task cancels the workflow unless detached, cancel() stops it`() = runBlocking {
        val client = emulator.client()
        // A screen going away: the coroutine that waits is cancelled, and so is the work.
        val scoped = Workflow(client).start(job(null), options)
        val waitingScoped = async { scoped.wait() }
        eventually(what = "the processing's start") { scoped.processingId() != null }
        waitingScoped.cancelAndJoin()
        val cancelled = assertThrows<SvcException.Canceled> { runBlocking { scoped.wait() } }
        assertEquals(ErrorKind.CANCELED, cancelled.kind())
        scoped.close()

        // Detached, it runs on: its wait cancelled, the object closed (or collected).
        val recorder = Recorder()
        val task = Workflow(client).start(job(null), options, recorder)
        task.detach()
        val waiting = async { task.wait() }
        eventually(what = "the processing's start") { task.processingId() != null }
        waiting.cancelAndJoin()
        assertFalse(task.isFinished())
        val processingId = requireNotNull(task.processingId())
        task.close()
        assertThrows<IllegalStateException> { task.processingId() }
        eventually(what = "the end of the workflow") { recorder.done() }
        assertEquals(ProcessingStatus.Processed, client.getProcessing(processingId).status)

        // cancel() stops it, and every wait says so.
        val stopped = Workflow(client).start(job(null), options)
        eventually(what = "the processing's start") { stopped.processingId() != null }
        stopped.cancel()
        val e = assertThrows<SvcException.Canceled> { runBlocking { stopped.wait() } }
        assertEquals(stopped.processingId(), e.processingId)
        assertEquals(ErrorKind.CANCELED, e.kind())
        // The processing goes on in the cloud until cancelled there.
        val id = requireNotNull(stopped.processingId())
        val processing = client.getProcessing(id)
        assertTrue(processing.status is ProcessingStatus.Pending || processing.status is ProcessingStatus.Processing, "$processing")
        client.cancelProcessing(id)
        assertEquals(ProcessingStatus.Canceled, client.getProcessing(id).status)
    }

    @Test
    fun `a processing started earlier is resumed to its outputs`() = runBlocking {
        val client = emulator.client()
        // Started, not followed (as an app that was closed meanwhile).
        val started = Workflow(client).start(job(null), options.copy(follow = false)).wait()
        val processingId = started.processing.id
        val out = Files.createTempDirectory("svc-resume").toFile()
        val recorder = Recorder()
        val outcome = Workflow(client).resume(processingId, out.path, options, recorder).wait()
        assertTrue(outcome.succeeded, "$outcome")
        assertEquals(processingId, outcome.processing.id)
        assertTrue(File(out, "trajectory.csv").length() > 0)
        assertTrue(recorder.done())
        // An identifier that is not one: refused before anything is sent.
        assertThrows<SvcException.InvalidInput> { Workflow(client).resume("nope", null, options) }
        Unit
    }

    @Test
    fun `a job that cannot run is refused before anything is sent`() = runBlocking {
        val missing = job(null).copy(inputs = listOf("/no/such/file.nmea"))
        val e = assertThrows<SvcException.Io> { runBlocking { Workflow(emulator.client()).start(missing, options).wait() } }
        assertTrue(e.reason.contains("nothing was sent"), e.reason)
        assertThrows<SvcException.InvalidInput> { Workflow(emulator.client()).start(job(null).copy(processingConfig = ProcessingConfig.Json("[]")), options) }
        Unit
    }

    @Test
    fun `pagers and typed errors of the cloud client`() = runBlocking {
        val client = emulator.client()
        val pager = client.listContainers()
        var total = 0
        while (true) {
            val page = pager.nextPage() ?: break
            total += page.size
        }
        assertEquals(client.listContainersAll().size, total)

        // 401: refused credentials.
        val refused = CloudClient.create(emulator.config(secret = "not-the-secret"))
        val e = assertThrows<SvcException.Authentication> { runBlocking { refused.serverInfo() } }
        assertTrue(!e.toString().contains("not-the-secret"), e.toString())
        // 404 with the service's body, read through the common accessors.
        val missing = assertThrows<SvcException> {
            runBlocking { client.getProcessing("00000000-0000-4000-8000-000000000000") }
        }
        assertEquals(ErrorKind.NOT_FOUND, missing.kind())
        assertEquals(404, missing.status())
        assertEquals("getProcessing", missing.operation())
        assertNotNull(missing.title())
        assertFalse(missing.retryable())
        // Refused before sending.
        assertThrows<SvcException.InvalidInput> { runBlocking { client.getContainer("not-a-uuid") } }
        Unit
    }

    @Test
    fun `cancelling a pager's page cancels its request`() = runBlocking {
        // A service that accepts connections and never answers.
        ServerSocket(0).use { hung ->
            val address = "http://127.0.0.1:${hung.localPort}"
            val client = CloudClient.create(emulator.config().copy(baseUrl = address, authUrl = address))
            val pager = client.listContainers()
            val started = System.nanoTime()
            assertNull(withTimeoutOrNull(300) { pager.nextPage() })
            assertTrue(System.nanoTime() - started < 2_000_000_000L)
            val page = async { client.listProcessings().nextPage() }
            delay(100)
            page.cancelAndJoin()
            assertTrue(page.isCancelled)
        }
    }

    @Test
    fun `a progress listener that throws does not break the workflow`() = runBlocking {
        val listener = object : WorkflowListener {
            override fun onProgress(progress: WorkflowProgress): Unit = throw IllegalStateException("listener bug")
        }
        val job = launch {
            val outcome = Workflow(emulator.client()).start(job(null), options.copy(follow = false), listener).wait()
            assertNotNull(outcome.processing.id)
        }
        job.join()
    }
}
