package svc.sdk.test

import java.io.File
import java.nio.file.Files
import java.time.Duration
import java.util.Collections
import java.util.UUID
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.ContainerFileStatus
import svc.sdk.ContainerFileType
import svc.sdk.ContainerRegion
import svc.sdk.CreateContainerFile
import svc.sdk.CreateContainerRequest
import svc.sdk.FileState
import svc.sdk.ProcessingJob
import svc.sdk.ProcessingStatus
import svc.sdk.StartProcessingRequest
import svc.sdk.SvcException
import svc.sdk.TransferListener
import svc.sdk.TransferOptions
import svc.sdk.TransferProgress
import svc.sdk.Transfers
import svc.sdk.UploadJob
import svc.sdk.Workflow
import svc.sdk.WorkflowOptions
import svc.sdk.progressFlow

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
            ProcessingJob(inputs = inputs.map { it.path }, processingConfig = Paths.sampleConfig()),
            WorkflowOptions(waitForFreeOrganization = true, pollInitial = Duration.ofMillis(50)),
        ).wait()
        val outputs = client.listProcessingOutputs(outcome.processing.id)
        val folder = Files.createTempDirectory("svc-download").toFile()
        val download = Transfers(TransferOptions()).download(outputs, folder.path).wait()
        assertEquals(outputs.size, download.files.size)
        assertTrue(File(folder, "trajectory.csv").length() > 0)
        assertTrue(download.elapsed < Duration.ofMinutes(1))
    }

    @Test
    fun `files uploaded to a container by path, outputs downloaded by processing, an unknown container typed`() = runBlocking {
        val client = emulator.client()
        val rover = File(Paths.samples, "rover.nmea")
        val container = client.createContainer(
            CreateContainerRequest(
                region = ContainerRegion.EuWest3,
                files = listOf(CreateContainerFile(path = "gnss/rover.nmea", size = rover.length(), fileType = ContainerFileType.Input)),
            ),
        )
        val transfers = Transfers(TransferOptions())
        val missing = assertThrows<SvcException.NotFound> {
            runBlocking { transfers.uploadToContainer(client, UUID.randomUUID().toString(), mapOf("gnss/rover.nmea" to rover.path)) }
        }
        assertEquals(404, missing.status())
        assertEquals("getContainer", missing.operation())
        assertTrue(missing.reason.contains("nothing was transferred"), missing.reason)
        // What a log line, a Toast or a crash report prints: the sentence, not the fields.
        assertEquals(missing.reason, missing.toString())
        assertEquals(missing.reason, missing.message)
        assertEquals(ContainerFileStatus.Pending, client.getContainer(container.id).files[0].status)

        val report = transfers.uploadToContainer(client, container.id, mapOf("gnss/rover.nmea" to rover.path))
        assertEquals(listOf(rover.length()), report.files.map { it.bytes })
        assertEquals(ContainerFileStatus.Ready, client.getContainer(container.id).files[0].status)

        val processing = client.startProcessing(
            StartProcessingRequest(containerId = container.id, processingConfig = Paths.sampleConfig()),
        )
        val folder = Files.createTempDirectory("svc-outputs").toFile()
        val deadline = System.nanoTime() + 30_000_000_000L
        while (client.getProcessing(processing.id).status != ProcessingStatus.Processed) {
            assertTrue(System.nanoTime() < deadline, "the processing did not end")
            delay(100)
        }
        // Times are durations, not counts of seconds.
        val ran: Duration = requireNotNull(client.getProcessing(processing.id).processingDuration)
        assertTrue(ran >= Duration.ofSeconds(1), "$ran")
        val downloaded = transfers.downloadOutputs(client, processing.id, folder.path)
        assertEquals(client.listProcessingOutputs(processing.id).size, downloaded.files.size)
        assertTrue(File(folder, "trajectory.csv").length() > 0)
    }

    @Test
    fun `cancelling the coroutine of an upload stops it at the storage`() = runBlocking {
        // A slow uplink (256 KiB/s): a 1 MiB file is still in flight when the scope goes.
        Emulator(extra = listOf("--no-device", "--upload-bytes-per-second", "262144")).use { slow ->
            val client = slow.client()
            val local = Files.createTempFile("imu", ".bin").toFile()
            local.writeBytes(ByteArray(1024 * 1024) { 7 })
            val container = client.createContainer(
                CreateContainerRequest(
                    region = ContainerRegion.EuWest3,
                    files = listOf(CreateContainerFile(path = "imu.bin", size = local.length(), fileType = ContainerFileType.Input)),
                ),
            )
            val transfers = Transfers(TransferOptions())
            val upload = async { transfers.uploadToContainer(client, container.id, mapOf("imu.bin" to local.path)) }
            delay(300)
            assertFalse(upload.isCompleted)
            upload.cancelAndJoin()
            assertTrue(upload.isCancelled)
            // Past the time the whole file would have taken: the storage never got it.
            delay(4500)
            assertEquals(ContainerFileStatus.Pending, client.getContainer(container.id).files[0].status)
        }
    }

    @Test
    fun `an upload's progress as a Flow, from the first snapshot to the finished one`() = runBlocking {
        val client = emulator.client()
        val imu = File(Paths.samples, "imu.csv")
        val container = client.createContainer(
            CreateContainerRequest(
                region = ContainerRegion.EuWest3,
                files = listOf(CreateContainerFile(path = imu.name, size = imu.length(), fileType = ContainerFileType.Input)),
            ),
        )
        val file = container.files.single()
        val upload = Transfers(TransferOptions()).upload(listOf(UploadJob(imu.path, file.path, imu.length(), requireNotNull(file.uploadInfo))))
        val seen = upload.progressFlow().toList()
        assertTrue(seen.isNotEmpty())
        assertTrue(seen.dropLast(1).none { it.finished }, "$seen")
        val last = seen.last()
        assertTrue(last.finished)
        assertEquals(imu.length(), last.doneBytes)
        assertEquals(FileState.DONE, last.files.single().state)
        assertEquals(seen.map { it.doneBytes }.sorted(), seen.map { it.doneBytes })
        // Collected again after the end: the final snapshot alone.
        assertEquals(listOf(last), upload.progressFlow().toList())
        assertEquals(imu.length(), upload.wait().files.single().bytes)
    }
}
