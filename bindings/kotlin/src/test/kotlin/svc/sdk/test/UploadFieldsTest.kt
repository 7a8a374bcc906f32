package svc.sdk.test

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.ObjectMapper
import java.io.ByteArrayOutputStream
import java.io.File
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.time.Duration
import java.util.UUID
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import svc.sdk.CloudClient
import svc.sdk.CloudConfig
import svc.sdk.ContainerFileStatus
import svc.sdk.ContainerFileType
import svc.sdk.ContainerRegion
import svc.sdk.CreateContainerFile
import svc.sdk.CreateContainerRequest
import svc.sdk.FileState
import svc.sdk.Secret
import svc.sdk.TransferOptions
import svc.sdk.Transfers
import svc.sdk.UploadJob

/**
 * The fields of an upload form as the service hands them out: the SDK sends every one,
 * unchanged and in order, those it does not know included. `svc emulator
 * --upload-extra-field NAME=VALUE` adds a field to every form, signed into its policy
 * like the others: the upload succeeds only if the field is sent unchanged.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UploadFieldsTest {
    private companion object {
        /** The fields every form carries, in the order the service hands them out. */
        val STANDARD = listOf(
            "bucket", "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date",
            "key", "Policy", "X-Amz-Signature", "X-Amz-Security-Token",
        )

        /** A field this SDK knows nothing of, with a value a careless form encoder would change (ASCII: it crosses a command line). */
        const val EXTRA_NAME = "x-amz-meta-uploaded-by"
        const val EXTRA_VALUE = "svc sdk kotlin/1+2=3"
    }

    private val process: Process =
        ProcessBuilder(
            Paths.svc.path, "emulator", "--no-device", "--processing-seconds", "1",
            "--upload-extra-field", "$EXTRA_NAME=$EXTRA_VALUE",
        )
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
    private val info: JsonNode = ObjectMapper().readTree(
        process.inputStream.bufferedReader().readLine()
            ?: error("the emulator exited before printing its addresses"),
    )
    private val http: HttpClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()

    @AfterAll
    fun stop() {
        process.destroy()
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
    }

    private fun text(name: String): String = info.get(name)?.asText() ?: error("no $name in the emulator's line")

    private fun client(): CloudClient = CloudClient.create(
        CloudConfig(
            baseUrl = text("base_url"),
            authUrl = text("auth_url"),
            notificationUrl = text("notification_url"),
            apiKey = text("api_key"),
            apiSecret = Secret(text("api_secret")),
            organizationId = text("organization_id"),
        ),
    )

    private fun send(request: HttpRequest): HttpResponse<String> =
        http.send(request, HttpResponse.BodyHandlers.ofString())

    /** The container as the service answers it, read without the SDK (the form's fields in their order). */
    private fun rawContainer(id: String): JsonNode {
        val discovery = ObjectMapper().readTree(
            send(HttpRequest.newBuilder(URI("${text("auth_url")}/.well-known/openid-configuration")).build()).body(),
        )
        val form = listOf(
            "grant_type" to "password", "client_id" to "api-key", "username" to text("api_key"),
            "password" to text("api_secret"), "scope" to "openid",
        ).joinToString("&") { (k, v) -> "$k=${URLEncoder.encode(v, Charsets.UTF_8)}" }
        val token = ObjectMapper().readTree(
            send(
                HttpRequest.newBuilder(URI(discovery.get("token_endpoint").asText()))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form))
                    .build(),
            ).body(),
        ).get("access_token").asText()
        return ObjectMapper().readTree(
            send(
                HttpRequest.newBuilder(URI("${text("base_url")}/api/v2/containers/$id"))
                    .header("Authorization", "Bearer $token")
                    .build(),
            ).body(),
        )
    }

    /** A multipart POST of `fields` in order, then `file`: the storage's status. */
    private fun postForm(url: String, fields: List<Pair<String, String>>, content: ByteArray): Int {
        val boundary = UUID.randomUUID().toString().replace("-", "")
        val body = ByteArrayOutputStream()
        for ((name, value) in fields) {
            body.write("--$boundary\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$value\r\n".toByteArray())
        }
        body.write("--$boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n\r\n".toByteArray())
        body.write(content)
        body.write("\r\n--$boundary--\r\n".toByteArray())
        val request = HttpRequest.newBuilder(URI(url))
            .header("Content-Type", "multipart/form-data; boundary=$boundary")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()))
            .build()
        return send(request).statusCode()
    }

    @Test
    fun `an unknown field handed out is sent and the upload succeeds`() = runBlocking {
        val client = client()
        val local = File(Files.createTempDirectory("svc-upload-fields").toFile(), "rover.nmea")
        local.writeBytes(File(Paths.samples, "rover.nmea").readBytes())
        val container = client.createContainer(
            CreateContainerRequest(
                region = ContainerRegion.EuWest3,
                files = listOf(CreateContainerFile(path = local.name, size = local.length(), fileType = ContainerFileType.Input)),
            ),
        )
        // The form, as the service wrote it: the standard fields in its order, then the unknown one.
        val raw = rawContainer(container.id).get("files").get(0).get("uploadInfo")
        val fields = raw.get("fields").properties().map { it.key to it.value.asText() }
        assertEquals(STANDARD + EXTRA_NAME, fields.map { it.first })
        assertEquals(EXTRA_VALUE, fields.last().second)

        // Without it storage refuses the form: the success below is the SDK sending it.
        assertEquals(403, postForm(raw.get("url").asText(), fields.filter { it.first != EXTRA_NAME }, local.readBytes()))
        assertEquals(ContainerFileStatus.Pending, client.getContainer(container.id).files[0].status)

        val file = container.files[0]
        val jobs = listOf(UploadJob(local.path, file.path, local.length(), requireNotNull(file.uploadInfo)))
        val report = Transfers(TransferOptions()).upload(jobs).wait()
        assertEquals(listOf(FileState.DONE), report.files.map { it.state }, "$report")
        assertEquals(listOf(1), report.files.map { it.attempts })
        assertEquals(ContainerFileStatus.Ready, client.getContainer(container.id).files[0].status)
    }
}
