package svc.sdk.test

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows
import svc.sdk.AccessToken
import svc.sdk.CloudClient
import svc.sdk.CloudConfig
import svc.sdk.ErrorKind
import svc.sdk.SvcException
import svc.sdk.TokenProvider
import svc.sdk.TokenProviderException

/** A distributed app's client: tokens from the app's backend, no key or secret. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TokenProviderTest {
    private val emulator = Emulator()

    @AfterAll
    fun stop() = emulator.close()

    /** The app's backend, which holds the organization's key and secret. */
    private class Backend(private val minting: CloudClient) : TokenProvider {
        val calls = AtomicInteger()

        override suspend fun accessToken(): AccessToken {
            calls.incrementAndGet()
            return minting.accessToken()
        }
    }

    private fun appConfig(provider: TokenProvider) = CloudConfig(
        baseUrl = emulator.text("base_url"),
        notificationUrl = emulator.text("notification_url"),
        organizationId = emulator.text("organization_id"),
        tokenProvider = provider,
    )

    @Test
    fun `an app client gets its tokens from the provider`() = runBlocking {
        val backend = Backend(emulator.client())
        val client = CloudClient.create(appConfig(backend))
        (1..8).map { async { client.serverInfo() } }.awaitAll()
        client.listContainersAll()
        assertEquals(1, backend.calls.get(), "one token, cached")
        assertFalse(appConfig(backend).toString().contains(emulator.text("api_secret")))
    }

    @Test
    fun `a provider that refuses, or throws, fails the call with a typed error`() = runBlocking {
        val refusing = object : TokenProvider {
            override suspend fun accessToken(): AccessToken = throw TokenProviderException.Refused("signed out")
        }
        val e = assertThrows<SvcException.Authentication> { runBlocking { CloudClient.create(appConfig(refusing)).serverInfo() } }
        assertTrue(e.reason.contains("signed out"), e.reason)
        assertFalse(e.retryable())

        val failing = object : TokenProvider {
            override suspend fun accessToken(): AccessToken = throw IllegalStateException("backend bug")
        }
        val config = appConfig(failing).copy(maxAttempts = 2)
        val unreachable = assertThrows<SvcException> { runBlocking { CloudClient.create(config).serverInfo() } }
        assertEquals(ErrorKind.UNREACHABLE, unreachable.kind())
        assertTrue(unreachable.retryable())

        // Both kinds of credentials at once, or none: refused.
        assertThrows<SvcException.InvalidInput> {
            CloudClient.create(emulator.config().copy(tokenProvider = refusing))
        }
        assertThrows<SvcException.InvalidInput> {
            CloudClient.create(emulator.config().copy(apiKey = null))
        }
        Unit
    }
}
