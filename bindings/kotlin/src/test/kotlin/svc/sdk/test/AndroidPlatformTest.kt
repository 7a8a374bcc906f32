package svc.sdk.test

import java.io.File
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import svc.sdk.AndroidPlatform
import svc.sdk.CloudClient
import svc.sdk.CloudConfig
import svc.sdk.Secret
import svc.sdk.TlsRoots

/**
 * `AndroidPlatform.init(context)`: its JNI crossing (the one call that is not through
 * JNA), and what it does off Android. Android's verifier itself runs only on a device.
 */
class AndroidPlatformTest {
    @Test
    fun theJniCrossingReachesTheLibraryAndAMissingContextIsAClearError() {
        // What System.loadLibrary does on Android, from the folder JNA loads it from.
        System.load(File(System.getProperty("jna.library.path"), "libsvc_ffi.so").absolutePath)
        val e = assertThrows<IllegalStateException> { AndroidPlatform.initForTest(null) }
        assertEquals("AndroidPlatform.init was given no Context (null)", e.message)
        // A context crosses (off Android nothing is initialized with it).
        AndroidPlatform.initForTest(Any())
    }

    @Test
    fun offAndroidInitDoesNothingAndThePlatformVerifierNeedsNone() {
        AndroidPlatform.init(Any())
        // The desktop JVM's platform verifier (the system's store) needs no Context.
        val client = CloudClient.create(CloudConfig(
            baseUrl = "https://api.example.com",
            authUrl = "https://auth.example.com",
            notificationUrl = "https://notifications.example.com",
            organizationId = "3687e831-5581-445c-ae06-f1af89980270",
            apiKey = "key",
            apiSecret = Secret("secret"),
            tls = TlsRoots.PLATFORM,
        ))
        client.close()
    }
}
