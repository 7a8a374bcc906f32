package svc.sdk.test

import com.fasterxml.jackson.databind.ObjectMapper
import java.io.File
import java.time.Duration
import java.time.Instant
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import svc.sdk.SvcException
import svc.sdk.Webhook
import svc.sdk.WebhookEvent

class WebhookTest {
    @Test
    fun `the shared webhook vectors`() {
        val doc = ObjectMapper().readTree(File(Paths.root, "tests/data/webhook_vectors.json"))
        val vectors = doc.get("vectors")
        assertTrue(vectors.size() >= 10)
        for (v in vectors) {
            val name = v.get("name").asText()
            val webhook = Webhook(v.get("secrets").map { it.asText() }, v.get("tolerance_seconds")?.asLong()?.let(Duration::ofSeconds))
            val headers = buildMap {
                v.get("timestamp").takeUnless { it.isNull }?.let { put("Svc-Timestamp", it.asText()) }
                v.get("signature").takeUnless { it.isNull }?.let { put("svc-signature", it.asText()) }
            }
            val body = v.get("body").asText().toByteArray(Charsets.UTF_8)
            fun outcome(verify: () -> WebhookEvent): String = try {
                verify()
                "valid"
            } catch (e: SvcException) {
                e.code() ?: "none"
            }
            val now = Instant.ofEpochSecond(v.get("now").asLong())
            assertEquals(v.get("expected").asText(), outcome { webhook.verifyAt(headers, body, now) }, name)
            assertEquals(v.get("ignoring_timestamp").asText(), outcome { webhook.verifyIgnoringTimestamp(headers, body) }, name)
        }
    }

    @Test
    fun `a verifier without a secret is refused`() {
        val e = assertThrows<SvcException.InvalidInput> { Webhook(listOf(""), null) }
        assertEquals("no_secret", e.code)
        assertEquals(Duration.ofMinutes(5), Webhook(listOf("whsec_x")).tolerance())
    }
}
