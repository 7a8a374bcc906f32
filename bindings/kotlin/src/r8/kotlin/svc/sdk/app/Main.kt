package svc.sdk.app

import kotlinx.coroutines.runBlocking
import svc.sdk.AccessToken
import svc.sdk.ByteLink
import svc.sdk.CloudClient
import svc.sdk.CloudConfig
import svc.sdk.ErrorKind
import svc.sdk.InsUnit
import svc.sdk.LinkException
import svc.sdk.LogLevel
import svc.sdk.LogRecord
import svc.sdk.LogSink
import svc.sdk.SettingsTree
import svc.sdk.SvcException
import svc.sdk.TokenProvider
import svc.sdk.TokenProviderException
import svc.sdk.setLogSink
import svc.sdk.settingsDiff

/**
 * A small app, shrunk and obfuscated by R8 with the SDK's consumer rules, then run on the
 * JVM (`cargo xtask kotlin`): each kind of crossing must still work — a sync call, an
 * error read through its accessors, an object, callbacks from Rust (a log sink, an
 * async token provider, an async byte link), async calls.
 */
fun main() = runBlocking {
    val patch = settingsDiff("""{"a":{"b":1}}""", """{"a":{"b":2}}""")
    check(patch.changed == listOf("a/b")) { "$patch" }

    val invalid = runCatching { SettingsTree.fromJson("{") }.exceptionOrNull()
    check(invalid is SvcException.InvalidInput && invalid.kind() == ErrorKind.INVALID_INPUT) { "$invalid" }
    SettingsTree.fromJson("""{"a":1}""").use { check(it.leafCount() == 1L) }

    val records = java.util.Collections.synchronizedList(mutableListOf<LogRecord>())
    setLogSink(object : LogSink {
        override fun log(record: LogRecord) {
            records.add(record)
        }
    }, LogLevel.TRACE)

    val client = CloudClient.create(CloudConfig(
        baseUrl = "http://127.0.0.1:9",
        notificationUrl = "http://127.0.0.1:9",
        organizationId = "5b1f4b52-43a4-4c5e-9a7b-6f1d1c3c0b11",
        tokenProvider = object : TokenProvider {
            override suspend fun accessToken(): AccessToken = throw TokenProviderException.Refused("signed out")
        },
    ))
    val refused = runCatching { client.serverInfo() }.exceptionOrNull()
    check(refused is SvcException.Authentication && refused.reason.contains("signed out")) { "$refused" }

    val unit = InsUnit.overLink(object : ByteLink {
        override suspend fun read(maxBytes: Int): ByteArray = throw LinkException.Closed()
        override suspend fun write(data: ByteArray) {}
    }, "closed link")
    val unreachable = runCatching { unit.info() }.exceptionOrNull()
    check(unreachable is SvcException && unreachable.kind() == ErrorKind.UNREACHABLE) { "$unreachable" }

    setLogSink(null, LogLevel.INFO)
    check(records.isNotEmpty()) { "no log record" }
    println("R8 app: every kind of crossing works after shrinking (${records.size} log records)")
}
