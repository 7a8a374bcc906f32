package svc.sdk

/**
 * Android: lets `TlsRoots.PLATFORM` verify certificates with Android's own trust manager,
 * so that the app's Network Security Config and the user's and the device management's
 * certificate authorities apply (the default, `TlsRoots.BUNDLED`, trusts Mozilla's roots
 * only). The verifier needs the app's `Context`: call [init] once at start, before
 * building a client with `TlsRoots.PLATFORM`:
 *
 * ```
 * class SurveyApp : Application() {
 *     override fun onCreate() {
 *         super.onCreate()
 *         AndroidPlatform.init(this)
 *     }
 * }
 * ```
 *
 * Without it, building such a client fails with an `InvalidInput` error that says so.
 * The AAR carries the verifier's Kotlin part (`org.rustls.platformverifier`, kept by the
 * consumer R8 rules).
 */
object AndroidPlatform {
    /**
     * Gives the platform's verifier the application context of [context] (an
     * `android.content.Context`). Later calls do nothing. Off Android (a desktop JVM,
     * where the platform verifier needs nothing) it does nothing.
     *
     * @throws IllegalArgumentException when [context] is not an `android.content.Context`
     * @throws IllegalStateException when the verifier refuses it
     */
    @JvmStatic
    fun init(context: Any) {
        val contextClass = try {
            Class.forName("android.content.Context")
        } catch (e: ClassNotFoundException) {
            return // not Android
        }
        require(contextClass.isInstance(context)) {
            "AndroidPlatform.init needs an android.content.Context, not ${context.javaClass.name}"
        }
        val application = contextClass.getMethod("getApplicationContext").invoke(context) ?: context
        // JNA loaded the library for the generated code; a JNI method needs it loaded
        // by the JVM as well (the same file).
        System.loadLibrary("svc_ffi")
        nativeInit(application)
    }

    /** The crossing itself, for the JVM tests (the library loaded by them). */
    internal fun initForTest(context: Any?) = nativeInit(context)

    @JvmStatic
    private external fun nativeInit(context: Any?)
}
