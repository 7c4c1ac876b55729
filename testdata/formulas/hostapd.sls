# hostapd-formula's pillar.example (saltstack-formulas/hostapd-formula at
# the commit of testdata/formulas.txt) with only the second of its two
# wlan0 ap_list keys (the list form): Salt 3006's YAML loader refuses the
# duplicate key, so it cannot render the example itself.
# See 
# * http://ftp.netbsd.org/pub/NetBSD/NetBSD-current/src/external/bsd/wpa/dist/hostapd/hostapd.conf
# * http://wiki.gentoo.org/wiki/Hostapd

hostapd:
  cardlist:
    wlan0:                      # the interface used by the AP
      bridge: br0
      hw_mode: g                 # g simply means 2.4GHz
      channel: 10               # the channel to use
      ieee80211d: 1             # limit the frequencies used to those allowed in the country
      country_code: DE          # the country code
      ieee80211n: 1             # 802.11n support
      wmm_enabled: 1            # QoS support
      # Alternative non-mixable syntax to define the order of the APs
      # (In my setup, the first AP had to use the interface as bss.
      # Therefore I had to put it before all other aps and omit the 'bss' parameter.)
      ap_list:  # now it's an actual list, if one's pydantic :-)
        - ssid: myssid1         # the name of the AP
          auth_algs: 1          # 1=wpa, 2=wep, 3=both
          wpa: 2                # WPA2 only
          wpa_key_mgmt: WPA-PSK 
          rsn_pairwise: CCMP
          wpa_passphrase: mysupersecretkey
        - ssid: myssid2
          bss: wlan1            # the name of the new interface hostapd will create to handle this AP 
          bridge: br0
          auth_algs: 1          # 1=wpa, 2=wep, 3=both
          wpa: 1                # WPA1 only
          wpa_key_mgmt: WPA-PSK 
          wpa_passphrase: someotherpassword
        - ssid: myssid3
          bss: wlan2
          wpa_passphrase: someotherpassword3
    wlan1:
      bridge: br1
      hw_mode: g                 # g simply means 2.4GHz
      channel: 10               # the channel to use
      ieee80211d: 1             # limit the frequencies used to those allowed in the country
      country_code: DE          # the country code
      ieee80211n: 1             # 802.11n support
      wmm_enabled: 1            # QoS support
      ap_list:
        myssid2:                # the name of the AP
          auth_algs: 1          # 1=wpa, 2=wep, 3=both
          wpa: 2                # WPA2 only
          wpa_key_mgmt: WPA-PSK 
          rsn_pairwise: CCMP
          wpa_passphrase: mysupersecretkey
      
