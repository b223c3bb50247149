// instance.cpp - instance creation and the device probe (see instance.hpp).
#include "instance.hpp"

#include <mutex>

#include <fmt/format.h>

#include <cstring>

namespace vaccel::backend::vulkan {

Instance::~Instance()
{
    if (handle != VK_NULL_HANDLE)
        vkDestroyInstance(handle, nullptr);
}

bool has_extension(VkPhysicalDevice device, const char* name)
{
    std::uint32_t count = 0;
    if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr) != VK_SUCCESS)
        return false;
    std::vector<VkExtensionProperties> extensions(count);
    if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()) !=
        VK_SUCCESS)
        return false;
    for (const auto& extension : extensions)
        if (std::strcmp(extension.extensionName, name) == 0)
            return true;
    return false;
}

namespace {

bool instance_has_extension(const char* name)
{
    std::uint32_t count = 0;
    if (vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) != VK_SUCCESS)
        return false;
    std::vector<VkExtensionProperties> extensions(count);
    if (vkEnumerateInstanceExtensionProperties(nullptr, &count, extensions.data()) != VK_SUCCESS)
        return false;
    for (const auto& extension : extensions)
        if (std::strcmp(extension.extensionName, name) == 0)
            return true;
    return false;
}

// FP16 cooperative matrices (MATMUL kernels, docs/adr/0013): the extension,
// its feature, shaderFloat16, storageBuffer16BitAccess and
// vulkanMemoryModel, and the shapes.
void read_coop_matrix(VkInstance instance, VkPhysicalDevice handle, PhysicalRecord& record)
{
    if (!has_extension(handle, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) return;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop{};
    coop.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.pNext = &coop;
    VkPhysicalDeviceVulkan11Features f11{};
    f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(handle, &features);
    // glslang declares the Vulkan memory model for GL_NV_cooperative_matrix
    // shaders (the VulkanMemoryModel capability), so that feature too.
    if (!coop.cooperativeMatrix || !f12.shaderFloat16 || !f11.storageBuffer16BitAccess ||
        !f12.vulkanMemoryModel)
        return;
    auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    if (list == nullptr) return;
    std::uint32_t count = 0;
    if (list(handle, &count, nullptr) != VK_SUCCESS || count == 0) return;
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(count);
    for (auto& s : shapes) s.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    if (list(handle, &count, shapes.data()) != VK_SUCCESS) return;
    shapes.resize(count);
    record.coop_matrix_nv = true;
    for (const auto& s : shapes)
        record.coop_entries.push_back(
            {s.MSize, s.NSize, s.KSize,
             s.AType == VK_COMPONENT_TYPE_FLOAT16_NV && s.BType == VK_COMPONENT_TYPE_FLOAT16_NV,
             s.CType == VK_COMPONENT_TYPE_FLOAT32_NV && s.DType == VK_COMPONENT_TYPE_FLOAT32_NV,
             s.scope == VK_SCOPE_SUBGROUP_NV});
}

PhysicalRecord read_device(VkInstance instance, VkPhysicalDevice handle)
{
    PhysicalRecord record;
    record.handle = handle;

    const bool pci_ext = has_extension(handle, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    const bool drm_ext = has_extension(handle, VK_EXT_PHYSICAL_DEVICE_DRM_EXTENSION_NAME);
    const bool host_ext = has_extension(handle, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);

    // The properties chain: 1.1 (uuid, subgroup size), driver properties, and
    // the optional extensions' structures only when offered.
    VkPhysicalDeviceVulkan11Properties v11{};
    v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES;
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
    pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    VkPhysicalDeviceDrmPropertiesEXT drm{};
    drm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRM_PROPERTIES_EXT;
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
    host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
    VkPhysicalDeviceProperties2 properties{};
    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    VkPhysicalDeviceProperties plain{};
    vkGetPhysicalDeviceProperties(handle, &plain);
    const bool v12 = plain.apiVersion >= VK_API_VERSION_1_2;
    void** next = &properties.pNext;
    auto chain = [&next](auto& structure) {
        *next = &structure;
        next = &structure.pNext;
    };
    if (v12) {
        chain(v11);
        chain(driver);
    }
    if (pci_ext) chain(pci);
    if (drm_ext) chain(drm);
    if (host_ext) chain(host);
    vkGetPhysicalDeviceProperties2(handle, &properties);
    const VkPhysicalDeviceProperties& p = properties.properties;

    record.facts.name = p.deviceName;
    record.facts.api_version = p.apiVersion;
    record.facts.type = p.deviceType;
    record.vendor_id = p.vendorID;
    record.device_id = p.deviceID;
    record.driver_version = p.driverVersion;
    record.limits = p.limits;
    if (v12) {
        std::memcpy(record.uuid.data(), v11.deviceUUID, record.uuid.size());
        record.subgroup_size = v11.subgroupSize;
        record.subgroup_operations = v11.subgroupSupportedOperations;
        record.subgroup_stages = v11.subgroupSupportedStages;
        record.driver_name = driver.driverName;
        record.driver_info = driver.driverInfo;
    }
    if (pci_ext)
        record.pci = PciLocation{pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction};
    if (record.pci)
        record.render_node = render_node_for(*record.pci);
    if (!record.render_node && drm_ext && drm.hasRender)
        record.render_node = render_node_for_minor(drm.renderMinor);
    if (host_ext && host.minImportedHostPointerAlignment != 0 &&
        (host.minImportedHostPointerAlignment & (host.minImportedHostPointerAlignment - 1)) == 0)
        record.host_import_alignment = host.minImportedHostPointerAlignment;

    if (v12) {
        VkPhysicalDeviceVulkan12Features f12{};
        f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
        VkPhysicalDeviceVulkan13Features f13{};
        f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
        VkPhysicalDeviceFeatures2 features{};
        features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
        features.pNext = &f12;
        // The 1.3 structure is only valid to chain on a 1.3 device.
        if (p.apiVersion >= VK_API_VERSION_1_3)
            f12.pNext = &f13;
        // Narrow storage (the 8- and 16-bit dtypes' kernels): 1.1's structure.
        VkPhysicalDeviceVulkan11Features f11{};
        f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
        f13.pNext = p.apiVersion >= VK_API_VERSION_1_3 ? &f11 : nullptr;
        if (p.apiVersion < VK_API_VERSION_1_3) f12.pNext = &f11;
        vkGetPhysicalDeviceFeatures2(handle, &features);
        record.storage_8bit = f12.storageBuffer8BitAccess == VK_TRUE;
        record.storage_16bit = f11.storageBuffer16BitAccess == VK_TRUE;
        record.facts.timeline_semaphore = f12.timelineSemaphore == VK_TRUE;
        record.facts.synchronization2 = f13.synchronization2 == VK_TRUE;
    }

    std::uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(handle, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family_properties(families);
    vkGetPhysicalDeviceQueueFamilyProperties(handle, &families, family_properties.data());
    for (const auto& family : family_properties)
        record.facts.queue_families.push_back(family.queueCount > 0 ? family.queueFlags : 0);
    record.queue_family = choose_queue_family(record.facts.queue_families).value_or(0);
    if (record.queue_family < family_properties.size())
        record.timestamp_bits = family_properties[record.queue_family].timestampValidBits;
    vkGetPhysicalDeviceMemoryProperties(handle, &record.memory);
    if (p.apiVersion >= VK_API_VERSION_1_2) read_coop_matrix(instance, handle, record);
    return record;
}

}  // namespace

namespace {

// The process's one VkInstance, made on the first successful probe and kept
// until exit (the static copy below is never destroyed). A driver may use
// initial-exec thread-local storage (NVIDIA's libnvidia-tls does), which
// glibc cannot hand out again once the loader has unloaded the driver with
// the last instance: a second vkCreateInstance then fails with
// VK_ERROR_INCOMPATIBLE_DRIVER ("cannot allocate memory in static TLS
// block"), as seen on an H200 when tests opened and closed devices in turn.
// Devices share ownership of it as before. A failed creation is not kept.
std::mutex kept_instance_mutex;

std::shared_ptr<Instance>& kept_instance()
{
    static auto* kept = new std::shared_ptr<Instance>();
    return *kept;
}

}  // namespace

Probe probe_devices()
{
    Probe probe;
    std::uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
        loader_version < VK_API_VERSION_1_3) {
        probe.unavailable = fmt::format("the Vulkan loader offers {}.{}, and 1.3 is required",
                                        VK_API_VERSION_MAJOR(loader_version),
                                        VK_API_VERSION_MINOR(loader_version));
        return probe;
    }
    VkApplicationInfo application{};
    application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    application.pApplicationName = "vaccel";
    application.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo create{};
    create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    create.pApplicationInfo = &application;
    // Portability drivers are listed only when the instance opts in.
    const char* portability = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    if (instance_has_extension(portability)) {
        create.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
        create.enabledExtensionCount = 1;
        create.ppEnabledExtensionNames = &portability;
    }
    std::shared_ptr<Instance> instance;
    {
        std::lock_guard lock(kept_instance_mutex);
        instance = kept_instance();
        if (!instance) {
            auto made = std::make_shared<Instance>();
            if (const VkResult result = vkCreateInstance(&create, nullptr, &made->handle);
                result != VK_SUCCESS) {
                made->handle = VK_NULL_HANDLE;
                probe.unavailable = fmt::format("vkCreateInstance failed ({}): no Vulkan driver "
                                                "is installed or none accepts Vulkan 1.3",
                                                static_cast<int>(result));
                return probe;
            }
            kept_instance() = made;
            instance = std::move(made);
        }
    }
    std::uint32_t count = 0;
    if (vkEnumeratePhysicalDevices(instance->handle, &count, nullptr) != VK_SUCCESS || count == 0) {
        probe.unavailable = "the Vulkan loader lists no physical device";
        return probe;
    }
    std::vector<VkPhysicalDevice> handles(count);
    if (vkEnumeratePhysicalDevices(instance->handle, &count, handles.data()) < 0) {
        probe.unavailable = "listing the Vulkan physical devices failed";
        return probe;
    }
    handles.resize(count);

    std::vector<PhysicalRecord> usable;
    for (VkPhysicalDevice handle : handles) {
        PhysicalRecord record = read_device(instance->handle, handle);
        record.probe_line = probe.lines.size();
        std::string why = refusal(record.facts);
        probe.lines.push_back({fmt::format("{} ({})", record.facts.name,
                                           type_word(record.facts.type)),
                               why.empty(), why});
        if (why.empty())
            usable.push_back(std::move(record));
    }
    std::vector<VkPhysicalDeviceType> types;
    for (const auto& record : usable)
        types.push_back(record.facts.type);
    for (std::size_t i : serving_order(types))
        probe.served.push_back(usable[i]);
    probe.instance = std::move(instance);
    return probe;
}

}  // namespace vaccel::backend::vulkan
