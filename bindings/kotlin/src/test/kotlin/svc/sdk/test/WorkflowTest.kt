package svc.sdk.test

import java.io.File
import java.nio.file.Files
import java.util.Collections
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.ProcessingJob
import svc.sdk.ProcessingResult
import svc.sdk.ProcessingStatus
import svc.sdk.SvcException
import svc.sdk.Workflow
import svc.sdk.WorkflowListener
import svc.sdk.WorkflowOptions
import svc.sdk.WorkflowProgress

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkflowTest {
    private val emulator = Emulator(processingSeconds = 2)

    @AfterAll
    fun stop() = emulator.close()

    private fun job(out: File?) = ProcessingJob(
        inputs = listOf(File(Paths.samples, "rover.nmea").path, File(Paths.samples, "imu.csv").path),
        processingJson = File(Paths.samples, "processing.json").readText(),
        name = "kotlin test",
        outputFolder = out?.path,
    )

    // The organization runs one processing at a time: wait for the previous test's.
    private val options = WorkflowOptions(waitForFreeOrganization = true, pollInitialMs = 50uL, pollMaxMs = 500uL)

    @Test
    fun `the whole workflow with progress gives the trajectory svc process gives`() = runBlocking {
        val out = Files.createTempDirectory("svc-kotlin").toFile()
        val seen = Collections.synchronizedList(mutableListOf<WorkflowProgress>())
        val listener = object : WorkflowListener {
            override fun onProgress(progress: WorkflowProgress) {
                seen.add(progress)
            }
        }
        Workflow(emulator.client()).use { workflow ->
            val task = workflow.start(job(out), options, listener)
            val outcome = task.wait()
            assertTrue(outcome.succeeded, "$outcome")
            assertEquals(ProcessingStatus.Processed, outcome.processing.status)
            assertEquals(ProcessingResult.Succeeded, outcome.processing.processingResult)
            assertEquals(outcome.processing.id, task.processingId())
            assertTrue(outcome.downloaded.any { it.endsWith("trajectory.csv") }, "${outcome.downloaded}")
            // The pre-signed addresses are secrets: printing the outcome does not show them.
            assertTrue(!outcome.toString().contains("Signature="), outcome.toString())
        }
        val stages = seen.toList()
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
    fun `cancelling the waiting coroutine cancels the workflow`() = runBlocking {
        val client = emulator.client()
        val task = Workflow(client).start(job(null), options)
        val waiting = async { task.wait() }
        withTimeout(60_000) {
            while (task.processingId() == null) delay(10)
        }
        waiting.cancelAndJoin()
        val e = assertThrows<SvcException.Canceled> { runBlocking { task.wait() } }
        val processingId = requireNotNull(task.processingId())
        assertEquals(processingId, e.processingId)
        // The processing goes on in the cloud until cancelled there.
        val processing = client.getProcessing(processingId)
        assertTrue(processing.status is ProcessingStatus.Pending || processing.status is ProcessingStatus.Processing, "$processing")
        client.cancelProcessing(processingId)
        assertEquals(ProcessingStatus.Canceled, client.getProcessing(processingId).status)
    }

    @Test
    fun `a job that cannot run is refused before anything is sent`() = runBlocking {
        val missing = job(null).copy(inputs = listOf("/no/such/file.nmea"))
        val e = assertThrows<SvcException.Io> { runBlocking { Workflow(emulator.client()).start(missing, options).wait() } }
        assertTrue(e.reason.contains("nothing was sent"), e.reason)
        assertThrows<SvcException.InvalidInput> { Workflow(emulator.client()).start(job(null).copy(processingJson = "[]"), options) }
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
        val refused = svc.sdk.CloudClient.create(emulator.config(secret = "not-the-secret"))
        val e = assertThrows<SvcException.Authentication> { runBlocking { refused.serverInfo() } }
        assertTrue(!e.toString().contains("not-the-secret"), e.toString())
        // 404 with the service's body.
        val missing = assertThrows<SvcException.NotFound> {
            runBlocking { client.getProcessing("00000000-0000-4000-8000-000000000000") }
        }
        assertEquals(404.toUShort(), missing.status)
        assertEquals("getProcessing", missing.operation)
        // Refused before sending.
        assertThrows<SvcException.InvalidInput> { runBlocking { client.getContainer("not-a-uuid") } }
        Unit
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
