package svc.sdk.test

import java.io.File
import java.nio.file.Files
import java.time.Duration
import java.util.Collections
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import svc.sdk.InsUnit
import svc.sdk.LogLevel
import svc.sdk.LogRecord
import svc.sdk.LogSink
import svc.sdk.ProcessingJob
import svc.sdk.UserName
import svc.sdk.Workflow
import svc.sdk.WorkflowOptions
import svc.sdk.setLogSink

/** The SDK's logs in the app's logger (here a list; on Android, Logcat), without secrets. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LogsTest {
    private val emulator = Emulator(processingSeconds = 1)

    @AfterAll
    fun stop() {
        setLogSink(null, LogLevel.INFO)
        emulator.close()
    }

    private class Collect : LogSink {
        val records: MutableList<LogRecord> = Collections.synchronizedList(mutableListOf())

        override fun log(record: LogRecord) {
            records.add(record)
        }
    }

    @Test
    fun `a workflow and a unit session log through the sink, without a secret`() = runBlocking {
        val sink = Collect()
        setLogSink(sink, LogLevel.TRACE)
        val client = emulator.client()
        val out = Files.createTempDirectory("svc-logs").toFile()
        val outcome = Workflow(client).start(
            ProcessingJob(
                inputs = listOf(File(Paths.samples, "rover.nmea").path, File(Paths.samples, "imu.csv").path),
                processingConfig = Paths.sampleConfig(),
                outputFolder = out.path,
            ),
            WorkflowOptions(waitForFreeOrganization = true, pollInitial = Duration.ofMillis(50)),
        ).wait()
        val unit = InsUnit.http(emulator.deviceUrl)
        unit.login(UserName.Setup, "")
        unit.changePassword(UserName.Operator, "op-pa55word")
        runCatching { InsUnit.http(emulator.deviceUrl).login(UserName.Operator, "wr0ng-pa55") }
        unit.write("""{"oem":{"label":"logged"}}""", false)
        unit.changePassword(UserName.Operator, "")
        val token = client.accessToken().token.reveal()
        setLogSink(null, LogLevel.TRACE)

        val records = sink.records.toList()
        assertTrue(records.size > 20, "${records.size} records")
        assertTrue(records.all { it.target.startsWith("svc_") }, "$records")
        assertTrue(records.any { it.level == LogLevel.INFO && it.message.contains("access token obtained") }, "$records")
        val secrets = listOf(emulator.text("api_secret"), token, "op-pa55word", "wr0ng-pa55") +
            outcome.outputs.mapNotNull { it.url.reveal().substringAfter('?', "").ifEmpty { null } }
        for (record in records) {
            for (secret in secrets) assertTrue(!record.message.contains(secret), "$record")
        }
        // No sink: nothing more arrives.
        val before = sink.records.size
        unit.info()
        assertEquals(before, sink.records.size)
    }
}
