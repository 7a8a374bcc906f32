package svc.sdk.test

import java.io.File
import java.nio.file.Files
import java.time.Duration
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import svc.sdk.ContainerFileStatus
import svc.sdk.ContainerFileType
import svc.sdk.ContainerRegion
import svc.sdk.CreateContainerFile
import svc.sdk.CreateContainerRequest
import svc.sdk.FileState
import svc.sdk.ProcessingJob
import svc.sdk.TransferListener
import svc.sdk.TransferOptions
import svc.sdk.TransferProgress
import svc.sdk.Transfers
import svc.sdk.UploadJob
import svc.sdk.Workflow
import svc.sdk.WorkflowOptions

/** Uploads to a container's forms and downloads of a processing's outputs, alone. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransferTest {
    private val emulator = Emulator(processingSeconds = 1)

    @AfterAll
    fun stop() = emulator.close()

    /** Collects progress; holds the transfer in its first report until the latch opens. */
    private class Progress : TransferListener {
        val seen: MutableList<TransferProgress> = Collections.synchronizedList(mutableListOf())
        val gate = CountDownLatch(1)

        override fun onProgress(progress: TransferProgress) {
            val first = synchronized(seen) { seen.isEmpty().also { seen.add(progress) } }
            if (first) gate.await(30, TimeUnit.SECONDS)
        }
    }

    @Test
    fun `files uploaded to a container's forms, then a processing's outputs downloaded`() = runBlocking {
        val client = emulator.client()
        val inputs = listOf(File(Paths.samples, "rover.nmea"), File(Paths.samples, "imu.csv"))
        val container = client.createContainer(
            CreateContainerRequest(
                region = ContainerRegion.EuWest3,
                files = inputs.map { CreateContainerFile(path = it.name, size = it.length(), fileType = ContainerFileType.Input) },
            ),
        )
        val jobs = container.files.map { file ->
            val local = inputs.first { it.name == file.path }
            UploadJob(local.path, file.path, local.length(), requireNotNull(file.uploadInfo))
        }
        // The form is a credential: its address is shown without its query.
        assertTrue(!jobs[0].uploadInfo.redactedUrl().contains("?"))
        val progress = Progress()
        val upload = Transfers(TransferOptions(parallelism = 2, progressInterval = Duration.ofMillis(10)), progress).upload(jobs)
        // Detached, a wait given up (the transfer held in its first report meanwhile)…
        upload.detach()
        val waiting = async { upload.wait() }
        delay(100)
        waiting.cancelAndJoin()
        assertTrue(waiting.isCancelled)
        assertFalse(upload.isFinished())
        // …does not stop the transfer.
        progress.gate.countDown()
        val report = upload.wait()
        assertEquals(inputs.map { it.length() }.sorted(), report.files.map { it.bytes }.sorted())
        assertTrue(report.files.all { it.state == FileState.DONE }, "$report")
        assertTrue(progress.seen.last().finished)
        assertEquals(inputs.sumOf { it.length() }, progress.seen.last().doneBytes)
        val uploaded = client.getContainer(container.id)
        assertTrue(uploaded.files.all { it.status == ContainerFileStatus.Ready }, "$uploaded")

        // Outputs of a processing, downloaded by themselves.
        val outcome = Workflow(client).start(
            ProcessingJob(inputs = inputs.map { it.path }, processingJson = File(Paths.samples, "processing.json").readText()),
            WorkflowOptions(waitForFreeOrganization = true, pollInitial = Duration.ofMillis(50)),
        ).wait()
        val outputs = client.listProcessingOutputs(outcome.processing.id)
        val folder = Files.createTempDirectory("svc-download").toFile()
        val download = Transfers(TransferOptions()).download(outputs, folder.path).wait()
        assertEquals(outputs.size, download.files.size)
        assertTrue(File(folder, "trajectory.csv").length() > 0)
        assertTrue(download.elapsed < Duration.ofMinutes(1))
    }
}
