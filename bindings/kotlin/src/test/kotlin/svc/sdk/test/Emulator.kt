package svc.sdk.test

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import java.io.File
import java.util.concurrent.TimeUnit
import svc.sdk.CloudClient
import svc.sdk.CloudConfig
import svc.sdk.ProcessingConfig
import svc.sdk.Secret
import svc.sdk.processingConfigFromJson

/** The workspace root (samples, test vectors) and the `svc` binary, from Maven. */
object Paths {
    val root: File = File(System.getProperty("svc.root") ?: "../..").canonicalFile
    val svc: File = File(System.getProperty("svc.binary") ?: "$root/target/debug/svc")
    val samples: File = File(root, "samples")

    /** The sample's processing configuration, read as an app reads a bundled file. */
    fun sampleConfig(): ProcessingConfig = processingConfigFromJson(File(samples, "processing.json").readText())
}

/**
 * `svc emulator` in a child process: the cloud service, its identity provider, storage
 * and an emulated unit, on free local ports. Its one JSON line gives the addresses.
 */
class Emulator(processingSeconds: Int = 2, extra: List<String> = emptyList()) : AutoCloseable {
    private val process: Process =
        ProcessBuilder(
            listOf(Paths.svc.path, "emulator", "--processing-seconds", processingSeconds.toString(), "--no-device-pty") + extra,
        )
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
    val info: JsonNode

    init {
        val line = process.inputStream.bufferedReader().readLine()
            ?: error("the emulator exited before printing its addresses")
        info = ObjectMapper().readTree(line)
    }

    fun text(name: String): String = info.get(name)?.asText() ?: error("no $name in the emulator's line")

    /** The administrator's settings (key and secret), or another secret (a 401). */
    fun config(secret: String = text("api_secret")) = CloudConfig(
        baseUrl = text("base_url"),
        authUrl = text("auth_url"),
        notificationUrl = text("notification_url"),
        apiKey = text("api_key"),
        apiSecret = Secret(secret),
        organizationId = text("organization_id"),
    )

    /** The emulated unit's REST address and its serial bridge (`host`, `port`). */
    val deviceUrl: String get() = text("device_url")
    val bridge: Pair<String, Int> get() = text("device_serial_tcp").split(":").let { (h, p) -> h to p.toInt() }

    fun client(): CloudClient = CloudClient.create(config())

    /** The environment `svc process` reads to use this emulator. */
    fun environment(): Map<String, String> = mapOf(
        "SVC_BASE_URL" to text("base_url"),
        "SVC_AUTH_URL" to text("auth_url"),
        "SVC_NOTIFICATION_URL" to text("notification_url"),
        "SVC_API_KEY" to text("api_key"),
        "SVC_API_SECRET" to text("api_secret"),
        "SVC_ORGANIZATION_ID" to text("organization_id"),
    )

    override fun close() {
        process.destroy()
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
    }
}
